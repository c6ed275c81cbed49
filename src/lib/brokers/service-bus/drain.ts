/**
 * A Service Bus drain session (the source side of a redrive), on peek-lock receives.
 *
 * A received message stays locked to this run: the SDK renews its lock while the run lasts, so it
 * is invisible to other receivers until the run settles it. `ack` completes it. `release` keeps
 * holding the lock (so this run never receives it again) and `close` abandons it, which puts it
 * back at its place: Service Bus never changes a message's sequence number, so released messages
 * return in their original order. Abandon raises the message's delivery count by one, as every
 * peek-lock receive that does not complete does (a lock that expires raises it too); on a queue
 * with a MaxDeliveryCount, enough redrive runs that leave a message behind would dead-letter it.
 * Deferring instead would hide it for good (a deferred message can only be received by sequence
 * number, and there is no "undefer"), and resending a copy would change its sequence number and
 * meet duplicate detection, so abandon is the one way back that keeps the message itself.
 *
 * A crash stops the renewals: the locks expire after the entity's lock duration and Service Bus
 * returns the messages by itself, so there is nothing to recover.
 *
 * The AMQP client keeps at most 2048 unsettled deliveries per session (rhea's window); a held
 * message at its head would stall the link. So a receiver (one link, one session) hands out at
 * most SLOT_BUDGET messages while any of them is unsettled, then a fresh receiver takes over; the
 * old one stays open, holding its locks, until close.
 */
import type {ServiceBusReceivedMessage, ServiceBusReceiver} from '@azure/service-bus'

import {BqError} from '../../errors.js'
import type {DrainSession, ReservedMessage} from '../adapter.js'
import type {ServiceBusEntity} from './entity.js'
import {isLockLost} from './errors.js'
import {toBrokerMessage} from './message.js'
import {DrainGuard} from '../shared/drain-guard.js'

/** Deliveries one receiver may hand out while some are unsettled (below rhea's 2048 window). */
const SLOT_BUDGET = 1000
/** Settlements in flight at once. */
const SETTLE_CONCURRENCY = 256

export interface DrainTuning {
  /** How long a receive waits for a first message before the drain counts the queue as done. */
  firstMessageWaitMs?: number
  /** How long a receive waits for more after its first message. */
  moreMessagesWaitMs?: number
}

export interface ServiceBusDrainInit {
  entity: ServiceBusEntity
  displayUrl: string
  /** How many messages this run may take: the count at start, capped by max. */
  limit: number
  openReceiver(): ServiceBusReceiver
  /** The adapter's registry of messages its own drains hold (count and browse leave them out). */
  held: Set<string>
  wrap(action: string, error: unknown): Error
  onClose(): void
  tuning?: DrainTuning
}

interface Slot {
  receiver: ServiceBusReceiver
  unsettled: number
  /** Deliveries since the slot last had nothing unsettled. */
  sinceClean: number
}

type HandleState = 'out' | 'released' | 'settled'

interface Handle {
  session: ServiceBusDrainSession
  slot: Slot
  message: ServiceBusReceivedMessage
  seq: string
  state: HandleState
}

export class ServiceBusDrainSession implements DrainSession {
  private readonly slots: Slot[] = []
  private readonly handles = new Set<Handle>()
  private taken = 0
  private exhausted = false
  private readonly guard: DrainGuard<Handle>

  constructor(private readonly init: ServiceBusDrainInit) {
    this.guard = new DrainGuard(this, `Service Bus drain of "${init.entity.name}"`, init.onClose)
  }

  async next(max: number): Promise<ReservedMessage[]> {
    let want = Math.min(this.guard.checkNext(max), this.init.limit - this.taken)
    if (want <= 0 || this.exhausted) return []
    const slot = this.slotFor()
    want = Math.min(want, SLOT_BUDGET - slot.sinceClean)
    let received: ServiceBusReceivedMessage[]
    try {
      received = await slot.receiver.receiveMessages(want, {
        maxWaitTimeInMs: this.init.tuning?.firstMessageWaitMs ?? 3000,
        // Read by the SDK's batching receiver (it spreads these options over its defaults); not in its typings.
        maxTimeAfterFirstMessageInMs: this.init.tuning?.moreMessagesWaitMs ?? 200,
      } as Parameters<ServiceBusReceiver['receiveMessages']>[1])
    } catch (error) {
      throw this.init.wrap(`receive from ${this.init.entity.name}`, error)
    }
    if (received.length === 0) {
      this.exhausted = true
      return []
    }
    // Receives come in sequence order on a non-partitioned entity; sorting keeps a batch in order regardless.
    received.sort((a, b) => (a.sequenceNumber !== undefined && b.sequenceNumber !== undefined ? a.sequenceNumber.compare(b.sequenceNumber) : 0))
    this.taken += received.length
    slot.unsettled += received.length
    slot.sinceClean += received.length
    return received.map((message) => {
      const seq = message.sequenceNumber?.toString() ?? ''
      const handle: Handle = {session: this, slot, message, seq, state: 'out'}
      this.handles.add(handle)
      this.init.held.add(seq)
      return {...toBrokerMessage(message, this.init.entity), handle}
    })
  }

  async ack(messages: ReservedMessage[]): Promise<void> {
    // A released message is refused: it is abandoned at close, never completed.
    const handles = this.guard.claim(messages, 'ack', (handle) => (handle.state === 'out' ? handle : undefined))
    let lost = 0
    let firstError: unknown
    await settleAll(handles, async (handle) => {
      try {
        await handle.slot.receiver.completeMessage(handle.message)
        this.settled(handle)
      } catch (error) {
        if (isLockLost(error)) {
          // The lock ran out before the complete: Service Bus has put the message back.
          lost++
          this.settled(handle)
        } else firstError ??= error
      }
    })
    if (firstError !== undefined) throw this.init.wrap(`complete messages on ${this.init.entity.name}`, firstError)
    if (lost > 0) {
      throw new BqError(`${lost} message(s) on ${this.init.entity.name} lost their lock before bq could remove them: they are back on the queue (their copies were sent, so they will be seen twice)`, {code: 'lock-lost'})
    }
  }

  /** Keeps holding the locks (renewed by the SDK) so this run never receives them again; abandoned at close. */
  async release(messages: ReservedMessage[]): Promise<void> {
    // Lenient: releasing a settled or released message again changes nothing.
    for (const handle of this.guard.claim(messages, 'release', (handle) => handle)) if (handle.state === 'out') handle.state = 'released'
  }

  async close(): Promise<void> {
    return this.guard.close(async () => {
      try {
        const pending = [...this.handles].filter((handle) => handle.state !== 'settled')
        await settleAll(pending, async (handle) => {
          try {
            await handle.slot.receiver.abandonMessage(handle.message)
          } catch {
            // Lock lost (already back) or the connection failed: the lock expires and the message returns.
          }
          this.settled(handle)
        })
        for (const slot of this.slots) await slot.receiver.close().catch(() => undefined)
      } finally {
        this.handles.clear()
      }
    })
  }


  private slotFor(): Slot {
    const current = this.slots.at(-1)
    if (current !== undefined) {
      if (current.unsettled === 0) current.sinceClean = 0
      if (current.sinceClean < SLOT_BUDGET) return current
    }
    const slot: Slot = {receiver: this.init.openReceiver(), unsettled: 0, sinceClean: 0}
    this.slots.push(slot)
    return slot
  }

  private settled(handle: Handle): void {
    if (handle.state === 'settled') return
    handle.state = 'settled'
    handle.slot.unsettled--
    this.handles.delete(handle)
    this.init.held.delete(handle.seq)
  }
}

/** Runs `settle` over every handle with bounded concurrency. */
async function settleAll(handles: Handle[], settle: (handle: Handle) => Promise<void>): Promise<void> {
  for (let start = 0; start < handles.length; start += SETTLE_CONCURRENCY) {
    await Promise.all(handles.slice(start, start + SETTLE_CONCURRENCY).map(settle))
  }
}
