import type {BrokerAdapter, ListedQueue} from '../brokers/adapter.js'
import {QueueNotFoundError} from '../errors.js'
import {isoTime} from '../output/table.js'
import {browseQueue} from './browse.js'

/**
 * `bq dlq ls`: every dead-letter queue of a broker, with its depth and, from a bounded sample read
 * with a true peek, the span of `dead_letter.failed_at`, the top reasons and the original queues.
 */

/** A DLQ by the BabelQueue naming: `<queue>.dlq`, or `<queue>-dlq` where names have no dots (SQS, also `-dlq.fifo`). */
const DLQ_NAME = /[.-]dlq(\.fifo)?$/

export interface DlqSummary {
  dlq: string
  /** `convention`: named `<queue>.dlq`; `native`: the broker's own dead-letter facility puts messages there. */
  kind: 'convention' | 'native'
  depth: number
  /** ISO times over the sampled messages; null when none was sampled or none carried one. */
  oldest_failed_at: string | null
  newest_failed_at: string | null
  /** The most frequent dead_letter.reason values in the sample, most frequent first (at most 3). */
  top_reasons: Array<{reason: string; count: number}>
  /** Where the messages came from: the sample's original queues, else the broker's or the name's. */
  original_queues: string[]
  /** Messages read for the figures above; less than depth means the figures are a sample. */
  sampled: number
  /** Why nothing was read (no true peek, --sample 0); absent when the DLQ was sampled. */
  not_sampled?: string
}

export interface DlqListRequest {
  /** Keep only DLQs whose name this matches. */
  match?: RegExp
  /** Read at most this many messages of each DLQ (0: read none). */
  sampleLimit: number
}

/** The DLQs among the broker's queues, in name order. */
export function dlqsAmong(queues: ListedQueue[], match?: RegExp): ListedQueue[] {
  return queues.filter((q) => (q.nativeDeadLetterFor !== undefined || DLQ_NAME.test(q.queue)) && (match === undefined || match.test(q.queue)))
}

/** Why this broker's DLQs cannot be read for free, or undefined when a browse is a true peek. */
export function sampleRefusal(adapter: BrokerAdapter, sampleLimit: number): string | undefined {
  if (sampleLimit === 0) return '--sample 0'
  if (adapter.capabilities.receiveSideEffects) return `${adapter.kind} has no true peek: reading would raise each message's receive count`
  if (!adapter.capabilities.truePeek) return `${adapter.kind} has no true peek: reading would flag each message redelivered (and count a delivery on quorum queues)`
  return undefined
}

export async function listDlqs(adapter: BrokerAdapter, request: DlqListRequest): Promise<DlqSummary[]> {
  const refusal = sampleRefusal(adapter, request.sampleLimit)
  const summaries: DlqSummary[] = []
  for (const listed of dlqsAmong(await adapter.listQueues(), request.match)) {
    let depth: number
    try {
      depth = await adapter.count(listed.queue)
    } catch (error) {
      // Deleted between the listing and the count: no longer a DLQ of this broker.
      if (error instanceof QueueNotFoundError) continue
      throw error
    }
    const summary: DlqSummary = {
      dlq: listed.queue,
      kind: listed.nativeDeadLetterFor === undefined ? 'convention' : 'native',
      depth,
      oldest_failed_at: null,
      newest_failed_at: null,
      top_reasons: [],
      original_queues: [],
      sampled: 0,
    }
    if (refusal !== undefined && depth > 0) summary.not_sampled = refusal
    if (refusal === undefined && depth > 0) await sample(adapter, summary, request.sampleLimit)
    if (summary.original_queues.length === 0) summary.original_queues = listed.nativeDeadLetterFor ?? originByName(listed.queue)
    summaries.push(summary)
  }
  return summaries
}

/** The queue a DLQ's name says it serves: `orders.dlq` → `orders`, `orders-dlq.fifo` → `orders.fifo`. */
function originByName(dlq: string): string[] {
  const base = dlq.replace(DLQ_NAME, '$1')
  return base === dlq || base === '' || base === '.fifo' ? [] : [base]
}

/** Reads up to `limit` messages of the DLQ with the adapter's (true-peek) browse and fills the figures in. */
async function sample(adapter: BrokerAdapter, summary: DlqSummary, limit: number): Promise<void> {
  let oldest: number | undefined
  let newest: number | undefined
  const reasons = new Map<string, number>()
  const origins = new Set<string>()
  const outcome = await browseQueue(adapter, {queue: summary.dlq, limit, scanLimit: limit}, (view) => {
    const dead = view.deadLetter
    const failedAt = dead?.failedAt
    if (failedAt !== undefined) {
      if (oldest === undefined || failedAt < oldest) oldest = failedAt
      if (newest === undefined || failedAt > newest) newest = failedAt
    }
    const reason = dead?.reason ?? (view.envelope === undefined ? 'poison' : undefined)
    if (reason !== undefined) reasons.set(reason, (reasons.get(reason) ?? 0) + 1)
    const origin = dead?.originalQueue ?? view.queue
    if (origin !== undefined) origins.add(origin)
  })
  summary.sampled = outcome.scanned
  summary.oldest_failed_at = isoTime(oldest) ?? null
  summary.newest_failed_at = isoTime(newest) ?? null
  summary.top_reasons = [...reasons].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 3).map(([reason, count]) => ({reason, count}))
  summary.original_queues = [...origins].sort()
}
