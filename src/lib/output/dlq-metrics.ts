import type {DlqSummary} from '../ops/dlq-list.js'
import {inflightFamilies} from './inflight-metrics.js'
import type {BrokerLabels, InflightGauges} from './inflight-metrics.js'
import type {MetricFamily} from './openmetrics.js'

/**
 * `bq dlq ls --format openmetrics`: each DLQ's figures as gauges labelled {broker, broker_url,
 * queue} (queue: the DLQ's name), and the in-flight gauges of the queues the DLQs serve, where
 * the broker shows them (inflight-metrics.ts). The metrics table in docs/metrics-and-alerting.md lists them.
 */

/** The `reason` value of the sampled messages outside the top reasons (and those without a reason). */
export const OTHER_REASON = 'other'
/** Longer reasons are cut to this many characters (the last one `…`): label values stay short. */
export const REASON_MAX_CHARS = 64

export interface DlqMetricsInput extends BrokerLabels {
  dlqs: DlqSummary[]
  /** The in-flight gauges of the DLQs' original queues, where the broker shows them. */
  inflight: InflightGauges[]
  /** Unix ms the ages are measured to. */
  now: number
}

export function dlqFamilies(input: DlqMetricsInput): MetricFamily[] {
  const base = (dlq: string) => ({broker: input.broker, broker_url: input.brokerUrl, queue: dlq})
  const depth: MetricFamily = {name: 'bq_dlq_messages', type: 'gauge', help: 'Messages on the dead-letter queue.', samples: []}
  const sampled: MetricFamily = {name: 'bq_dlq_sampled_messages', type: 'gauge', help: 'Messages bq dlq ls read (a true peek, up to --sample) for the failure ages and reasons; absent where the broker has no true peek.', samples: []}
  const byReason: MetricFamily = {name: 'bq_dlq_messages_by_reason', type: 'gauge', help: `Sampled messages per dead_letter.reason: the 3 most frequent, the rest (and messages without a reason) under the reason ${OTHER_REASON}; reasons cut to ${REASON_MAX_CHARS} characters.`, samples: []}
  const oldest: MetricFamily = {name: 'bq_dlq_oldest_failed_age_seconds', type: 'gauge', unit: 'seconds', help: 'Age of the oldest dead_letter.failed_at among the sampled messages.', samples: []}
  const newest: MetricFamily = {name: 'bq_dlq_newest_failed_age_seconds', type: 'gauge', unit: 'seconds', help: 'Age of the newest dead_letter.failed_at among the sampled messages.', samples: []}
  for (const d of input.dlqs) {
    depth.samples.push({labels: base(d.dlq), value: d.depth})
    if (d.not_sampled !== undefined) continue
    sampled.samples.push({labels: base(d.dlq), value: d.sampled})
    for (const [reason, count] of boundedReasons(d)) byReason.samples.push({labels: {...base(d.dlq), reason}, value: count})
    if (d.oldest_failed_at !== null) oldest.samples.push({labels: base(d.dlq), value: ageSeconds(input.now, d.oldest_failed_at)})
    if (d.newest_failed_at !== null) newest.samples.push({labels: base(d.dlq), value: ageSeconds(input.now, d.newest_failed_at)})
  }
  return [depth, sampled, byReason, oldest, newest, ...inflightFamilies(input, input.inflight)]
}

/**
 * The top reasons dlq ls found (at most 3), cut to REASON_MAX_CHARS, then `other` for the rest of
 * the sample. Values that end up equal (two long reasons with one beginning, a reason named
 * `other`) are added together: one label set per series.
 */
export function boundedReasons(d: DlqSummary): Map<string, number> {
  const counts = new Map<string, number>()
  let named = 0
  for (const {reason, count} of d.top_reasons) {
    // An empty reason is no reason: Prometheus reads an empty label value as no label at all.
    const label = reason === '' ? OTHER_REASON : truncate(reason)
    counts.set(label, (counts.get(label) ?? 0) + count)
    named += count
  }
  const rest = d.sampled - named
  if (rest > 0) counts.set(OTHER_REASON, (counts.get(OTHER_REASON) ?? 0) + rest)
  return counts
}

/** At most REASON_MAX_CHARS characters (code points: a surrogate pair is never split). */
function truncate(reason: string): string {
  const chars = [...reason]
  return chars.length <= REASON_MAX_CHARS ? reason : `${chars.slice(0, REASON_MAX_CHARS - 1).join('')}…`
}

/** Seconds from `iso` to `now`, to the millisecond; never negative (a clock ahead of ours). */
function ageSeconds(now: number, iso: string): number {
  return Math.max(0, now - Date.parse(iso)) / 1000
}
