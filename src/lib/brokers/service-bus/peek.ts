/**
 * Non-destructive reading of a Service Bus entity with `com.microsoft:peek-message`: pages by
 * sequence number, which Service Bus assigns in enqueue order and never changes (an abandoned or
 * expired lock puts a message back with the same number), so a peek always lists a queue in order.
 *
 * A peek also returns scheduled and deferred messages and messages locked by receivers. bq counts
 * and browses what a receive could take: active messages, minus those this process's own drains
 * hold. Locks held by other processes cannot be seen in a peek (Service Bus documents that the
 * lock state is not observable there), so their messages are counted.
 */
import {createRequire} from 'node:module'

import type {ServiceBusReceivedMessage, ServiceBusReceiver} from '@azure/service-bus'

export type SequenceNumber = NonNullable<ServiceBusReceivedMessage['sequenceNumber']>

interface LongStatic {
  fromNumber(value: number): SequenceNumber
}

// The `long` package the SDK itself uses (its Long type is what peekMessages accepts), resolved from the SDK's location.
const sdkRequire = createRequire(createRequire(import.meta.url).resolve('@azure/service-bus'))
const Long = sdkRequire('long') as LongStatic

/** Messages per peek request. Service Bus may answer with fewer; only an empty page ends a scan. */
export const PEEK_PAGE = 250

export function firstSequenceNumber(): SequenceNumber {
  return Long.fromNumber(0)
}

export interface PeekFilter {
  /** Sequence numbers (as text) this process holds locked in its drains. */
  held: ReadonlySet<string>
}

/** Whether a receive could take this message now (and it is not one of ours). */
export function countable(message: ServiceBusReceivedMessage, filter: PeekFilter): boolean {
  return message.state === 'active' && !filter.held.has(message.sequenceNumber?.toString() ?? '')
}

/**
 * Calls `visit` for every countable message from `from` on, page by page, until it returns false
 * or the entity ends. Resolves to the sequence number to continue from.
 */
export async function scan(
  receiver: ServiceBusReceiver,
  from: SequenceNumber,
  filter: PeekFilter,
  options: {omitBody?: boolean},
  visit: (message: ServiceBusReceivedMessage) => boolean,
): Promise<SequenceNumber> {
  let next = from
  for (;;) {
    const page = await receiver.peekMessages(PEEK_PAGE, {fromSequenceNumber: next, skipParsingBodyAsJson: true, omitMessageBody: options.omitBody} as Parameters<ServiceBusReceiver['peekMessages']>[1])
    if (page.length === 0) return next
    for (const message of page) {
      if (message.sequenceNumber !== undefined) next = message.sequenceNumber.add(1)
      if (countable(message, filter) && !visit(message)) return next
    }
  }
}

/**
 * Where the last page of a browse ended, so the next page (offset = previous offset + limit)
 * continues by sequence number instead of peeking past everything before it again. Valid only
 * while nothing this process did changed the entity; any publish or settle drops it, and it ages out.
 */
export class PeekCursors {
  private readonly cursors = new Map<string, {offset: number; next: SequenceNumber; at: number}>()
  constructor(private readonly maxAgeMs = 30_000) {}

  find(key: string, offset: number): SequenceNumber | undefined {
    const cursor = this.cursors.get(key)
    if (cursor === undefined || cursor.offset !== offset || Date.now() - cursor.at > this.maxAgeMs) return undefined
    return cursor.next
  }

  remember(key: string, offset: number, next: SequenceNumber): void {
    this.cursors.set(key, {offset, next, at: Date.now()})
  }

  forget(key: string): void {
    for (const k of this.cursors.keys()) if (k === key || k.startsWith(`${key}/`)) this.cursors.delete(k)
  }
}
