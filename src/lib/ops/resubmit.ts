import type {BrokerAdapter} from '../brokers/adapter.js'
import type {Envelope} from '../envelope/envelope.js'
import {browseQueue} from './browse.js'
import {keySelector} from './match.js'
import type {Selector} from './selector.js'
import type {MessageView} from './message-view.js'
import {redrive} from './redrive.js'
import type {RedriveItem, RedriveReport} from './redrive-types.js'

/**
 * `dlq edit`'s broker side: find one message by meta.id without taking it, then move its edited
 * copy with the redrive engine, so the copy is confirmed before the original leaves the DLQ.
 */

/** Exact meta.id equality (a glob would read `*` or `?` in an id as wildcards). */
export function idSelector(id: string): Selector {
  return keySelector('id', (value) => value === id, `id=${id}`)
}

/** The first message on `dlq` whose meta.id is `id`, read without taking it; undefined when none. */
export async function findById(source: BrokerAdapter, dlq: string, id: string): Promise<MessageView | undefined> {
  const found = await browseQueue(source, {queue: dlq, limit: 1, selectors: [idSelector(id)], scanLimit: Number.MAX_SAFE_INTEGER})
  return found.views[0]
}

export interface ResubmitRequest {
  source: BrokerAdapter
  dlq: string
  id: string
  /** The envelope as it was read for editing: only a message still byte-identical to it is replaced. */
  original: Envelope
  edited: Envelope
  toQueue?: string
  acceptDeliveryCost?: boolean
}

export interface ResubmitOutcome {
  report: RedriveReport
  /** The item of the message that was resubmitted, or of the one that could not be. */
  item?: RedriveItem
  /** Other messages with the same meta.id, left on the DLQ. */
  others: RedriveItem[]
}

/**
 * Moves the edited copy in place of the original: reset like a redrive, published (confirmed)
 * before the original is removed. Only one message moves: a second one with the same meta.id,
 * or one that changed since it was read, stays on the DLQ and is reported.
 */
export async function resubmit(request: ResubmitRequest): Promise<ResubmitOutcome> {
  let used = false
  const items: RedriveItem[] = []
  const report = await redrive({
    source: request.source,
    dlq: request.dlq,
    toQueue: request.toQueue,
    selectors: [idSelector(request.id)],
    max: 0,
    bypass: false,
    dryRun: false,
    acceptDeliveryCost: request.acceptDeliveryCost,
    onItem: (item) => {
      if (item.outcome !== 'skipped') items.push(item)
    },
    transform: (envelope) => {
      if (used) return {error: 'another message with this meta.id: left on the DLQ (edit it on its own)'}
      if (envelope.text !== request.original.text) return {error: 'it changed since it was read for editing: left on the DLQ'}
      used = true
      return {envelope: request.edited}
    },
  })
  const item = items.find((entry) => entry.outcome === 'redriven') ?? items[0]
  return {report, item, others: items.filter((entry) => entry !== item)}
}
