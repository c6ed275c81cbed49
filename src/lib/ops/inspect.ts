import type {BrokerAdapter, RelatedQueue} from '../brokers/adapter.js'
import {UsageError} from '../errors.js'
import {browseQueue} from './browse.js'
import type {RedriveHistory} from '../ledger/redrive-history.js'
import type {SchemaRegistry} from '../schema/registry.js'
import {schemaFailure} from './hold.js'
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
  /** Messages of the group the run ledger recorded as redriven before, and the most times one was. */
  redriven_before: number
  most_redrives: number
  /** With a registry: how many pass their URN's current schema, and the first failing rule of the rest. */
  passing?: number
  first_failing_rule?: string | null
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
  /** Examined messages this run ledger recorded as redriven before, by how many times (loop guard). */
  redriven_before: {messages: number; by_times: Array<{times: number; messages: number}>}
  /** The registry the groups' `passing` counts were checked against. */
  registry?: string
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
  options: {dlq: string; groupBy: GroupKey[]; selectors?: Selector[]; scanLimit: number; onMessage?: (view: MessageView, redrives: number) => void; history?: RedriveHistory; registry?: SchemaRegistry},
): Promise<TriageReport> {
  const before = {messages: 0, byTimes: {} as Record<number, number>}
  const groups = new Map<string, TriageGroup>()
  // Compared as numbers, printed as ISO strings at the end.
  const span = new Map<TriageGroup, {oldest?: number; newest?: number}>()
  const depth = await adapter.count(options.dlq)
  const outcome = await browseQueue(adapter, {queue: options.dlq, limit: options.scanLimit, scanLimit: options.scanLimit, selectors: options.selectors}, (view) => {
    const redrives = options.history?.times(view.id) ?? 0
    options.onMessage?.(view, redrives)
    const group = addToGroup(groups, view, options.groupBy, options.registry !== undefined)
    if (!span.has(group)) span.set(group, {})
    group.count++
    if (redrives > 0) {
      group.redriven_before++
      group.most_redrives = Math.max(group.most_redrives, redrives)
      before.messages++
      before.byTimes[redrives] = (before.byTimes[redrives] ?? 0) + 1
    }
    if (options.registry !== undefined && !group.poison) {
      const failure = schemaFailure(options.registry, view)
      if (failure === undefined) group.passing = (group.passing ?? 0) + 1
      else group.first_failing_rule ??= failure
    }
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
    redriven_before: {messages: before.messages, by_times: timesList(before.byTimes)},
    ...(options.registry === undefined ? {} : {registry: options.registry.path}),
  }
}

/** {2: 5} as [{times: 2, messages: 5}], fewest times first (JSON keys stay names, not numbers). */
export function timesList(byTimes: Record<number, number>): Array<{times: number; messages: number}> {
  return Object.entries(byTimes).map(([times, messages]) => ({times: Number(times), messages})).sort((a, b) => a.times - b.times)
}

/**
 * The group a message belongs to, made on first sight. With a registry every group counts
 * passing messages from zero; poison has no data to check.
 */
export function addToGroup(groups: Map<string, TriageGroup>, view: MessageView, groupBy: GroupKey[], checking = false): TriageGroup {
  const poison = view.envelope === undefined
  const key: Record<string, string | null> = {}
  if (!poison) for (const name of groupBy) key[name] = groupValue(view, name)
  const id = poison ? 'poison' : JSON.stringify(key)
  let group = groups.get(id)
  if (!group) {
    group = {key, poison, count: 0, oldest_failed_at: null, newest_failed_at: null, redriven_before: 0, most_redrives: 0, ...(checking && !poison ? {passing: 0, first_failing_rule: null} : {})}
    groups.set(id, group)
  }
  return group
}
