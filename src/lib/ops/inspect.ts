import type {BrokerAdapter, RelatedQueue} from '../brokers/adapter.js'
import {UsageError} from '../errors.js'
import {browseQueue} from './browse.js'
import type {Selector} from './selector.js'
import type {MessageView} from './message-view.js'
import {isoTime} from '../output/table.js'

/** `bq dlq inspect`: a triage summary of a dead-letter queue, grouped, streamed. */

export const GROUP_KEYS = ['reason', 'urn', 'exception', 'original_queue', 'lang', 'error'] as const
export type GroupKey = (typeof GROUP_KEYS)[number]
export const DEFAULT_GROUP_BY: GroupKey[] = ['reason', 'urn', 'exception', 'original_queue']

export interface TriageGroup {
  key: Record<string, string | null>
  /** Undecodable bodies form their own group. */
  poison: boolean
  count: number
  /** ISO-8601 UTC with milliseconds, like every time bq prints in JSON. */
  oldest_failed_at: string | null
  newest_failed_at: string | null
}

export interface TriageReport {
  dlq: string
  broker: string
  depth: number
  scanned: number
  truncated: boolean
  group_by: GroupKey[]
  groups: TriageGroup[]
  /** Queues the broker's binding ties to this DLQ (retry tiers), where the adapter knows them. */
  related_queues?: RelatedQueue[]
}

export function parseGroupBy(values: string[] | undefined): GroupKey[] {
  if (!values || values.length === 0) return DEFAULT_GROUP_BY
  const keys = values.flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean)
  for (const key of keys) {
    if (!(GROUP_KEYS as readonly string[]).includes(key)) throw new UsageError(`--group-by "${key}": expected one of ${GROUP_KEYS.join(', ')}`)
  }
  return keys as GroupKey[]
}

function groupValue(view: MessageView, key: GroupKey): string | null {
  const dead = view.deadLetter
  switch (key) {
    case 'reason': return dead?.reason ?? null
    case 'urn': return view.urn ?? null
    case 'exception': return dead?.exception ?? null
    case 'original_queue': return dead?.originalQueue ?? view.queue ?? null
    case 'lang': return dead?.lang ?? view.lang ?? null
    case 'error': return dead?.error ?? null
  }
}

export async function inspectDlq(
  adapter: BrokerAdapter,
  options: {dlq: string; groupBy: GroupKey[]; selectors?: Selector[]; scanLimit: number; onMessage?: (view: MessageView) => void},
): Promise<TriageReport> {
  const groups = new Map<string, TriageGroup>()
  // Compared as numbers, printed as ISO strings at the end.
  const span = new Map<TriageGroup, {oldest?: number; newest?: number}>()
  const depth = await adapter.count(options.dlq)
  const outcome = await browseQueue(adapter, {queue: options.dlq, limit: options.scanLimit, scanLimit: options.scanLimit, selectors: options.selectors}, (view) => {
    options.onMessage?.(view)
    const poison = view.envelope === undefined
    const key: Record<string, string | null> = {}
    if (!poison) for (const name of options.groupBy) key[name] = groupValue(view, name)
    const id = poison ? 'poison' : JSON.stringify(key)
    let group = groups.get(id)
    if (!group) {
      group = {key, poison, count: 0, oldest_failed_at: null, newest_failed_at: null}
      groups.set(id, group)
      span.set(group, {})
    }
    group.count++
    const failedAt = view.deadLetter?.failedAt
    const times = span.get(group)
    if (failedAt !== undefined && times !== undefined) {
      if (times.oldest === undefined || failedAt < times.oldest) times.oldest = failedAt
      if (times.newest === undefined || failedAt > times.newest) times.newest = failedAt
    }
  })
  for (const [group, times] of span) {
    group.oldest_failed_at = isoTime(times.oldest) ?? null
    group.newest_failed_at = isoTime(times.newest) ?? null
  }
  const related = adapter.relatedQueues === undefined ? undefined : await adapter.relatedQueues(options.dlq)
  return {
    dlq: options.dlq,
    broker: adapter.displayUrl,
    depth,
    scanned: outcome.scanned,
    truncated: outcome.truncated,
    group_by: options.groupBy,
    groups: [...groups.values()].sort((a, b) => b.count - a.count),
    ...(related === undefined ? {} : {related_queues: related}),
  }
}
