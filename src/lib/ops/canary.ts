/**
 * A canary redrive: stages that grow. Stage 1 moves the first `size` selected messages, then the
 * DLQ is watched (canary-watch.ts) for those that come back. When the share that came back
 * reaches `abortAt` the canary stops and the rest stay on the DLQ; otherwise the next stage moves
 * `ramp` times as many, until every selected message moved or `max` is reached. Each stage is an
 * ordinary redrive (redrive.ts, through the caller's runStage) limited to its size, so every rule
 * of a redrive holds per stage, signals included; messages a stage moved that came back are held
 * (`returned`) by the later stages.
 */
import {DEFAULT_GROUP_BY, addToGroup} from './inspect.js'
import type {TriageGroup} from './inspect.js'
import type {MessageView} from './message-view.js'
import type {HoldRule, RedriveCounts, RedriveReport} from './redrive-types.js'
import type {WatchOutcome, WatchRequest} from './canary-watch.js'

export interface CanaryPlan {
  /** Stage 1's size. */
  size: number
  /** How long each stage is watched, ms. */
  watchMs: number
  /** The returned share (0–1) that stops the canary. */
  abortAt: number
  /** Each stage's size is the previous one's times this. */
  ramp: number
  /** At most this many moved in all (0 = no limit). */
  max: number
}

export interface CanaryStage {
  stage: number
  /** The most this stage could move. */
  size: number
  moved: number
  returned: number
  /** returned / moved. */
  share: number
  watch_seconds: number
  returned_ids: string[]
  aborted?: boolean
  counts: RedriveCounts
}

export interface CanaryReport {
  dlq: string
  source: string
  target: string
  dry_run: false
  canary: {size: number; watch_seconds: number; abort_at: number; ramp: number; max: number}
  stages: CanaryStage[]
  /** Summed over the stages (held-back and not-selected counts are the last stage's: each stage re-examines those). */
  counts: RedriveCounts
  /** Messages moved that came back, grouped as dlq inspect groups them. */
  returned: {count: number; ids: string[]; groups: TriageGroup[]}
  aborted: boolean
  stopped_early: boolean
  stop_reason?: string
}

export interface CanaryHooks {
  /** Runs one stage: a redrive moving at most `limit`, with `hold` added to the run's own, handing every item's outcome to `onItem`. */
  runStage: (stage: number, limit: number, hold: HoldRule, onItem: (item: {id: string | null; outcome: string}) => void) => Promise<RedriveReport>
  watch: (request: Omit<WatchRequest, 'source' | 'dlq' | 'stopRequested' | 'onTick'> & {stage: number}) => Promise<WatchOutcome>
  /** After each stage's moves and after its watch: the stages so far and the ids just moved (for the ledger). */
  checkpoint: (stages: CanaryStage[], movedIds: string[]) => void
}

export function stageSizes(plan: Pick<CanaryPlan, 'size' | 'ramp' | 'max'>, selected: number): number[] {
  const total = plan.max > 0 ? Math.min(plan.max, selected) : selected
  const sizes: number[] = []
  let sum = 0
  let next = plan.size
  while (sum < total) {
    const size = Math.min(next, total - sum)
    sizes.push(size)
    sum += size
    next = Math.min(Number.MAX_SAFE_INTEGER, next * plan.ramp)
  }
  return sizes
}

export async function canaryRedrive(base: {dlq: string; source: string; target: string}, plan: CanaryPlan, hooks: CanaryHooks): Promise<CanaryReport> {
  const report: CanaryReport = {
    ...base, dry_run: false,
    canary: {size: plan.size, watch_seconds: plan.watchMs / 1000, abort_at: plan.abortAt, ramp: plan.ramp, max: plan.max},
    stages: [], counts: {examined: 0, redriven: 0, would_redrive: 0, skipped: 0, poison: 0, failed: 0},
    returned: {count: 0, ids: [], groups: []}, aborted: false, stopped_early: false,
  }
  /** Every id this canary moved, with the failed_at it had then: a later stage never moves one twice. */
  const movedEver = new Map<string, number | undefined>()
  /** The selected messages of the stage being planned, with their failed_at (the watch compares it). */
  let seen = new Map<string, number | undefined>()
  const hold: HoldRule = (view) => {
    if (view.id !== undefined && movedEver.has(view.id)) return {outcome: 'returned', error: 'moved by an earlier stage of this canary and dead-lettered again'}
    if (view.id !== undefined) seen.set(view.id, view.deadLetter?.failedAt)
    return undefined
  }
  const returnedViews: MessageView[] = []
  let size = plan.size
  for (let stage = 1; ; stage++) {
    const limit = plan.max > 0 ? Math.min(size, plan.max - report.counts.redriven) : size
    if (limit <= 0) break
    seen = new Map()
    const moved = new Map<string, number | undefined>()
    // From each item as it is reported (a report keeps its items only under --json).
    const result = await hooks.runStage(stage, limit, hold, (item) => {
      if (item.outcome === 'redriven' && item.id !== null) moved.set(item.id, seen.get(item.id))
    })
    addCounts(report.counts, result.counts)
    // A stage after the last full one that found nothing more to move is no stage of the report.
    if (result.counts.redriven === 0 && stage > 1) break
    for (const [id, failedAt] of moved) movedEver.set(id, failedAt)
    const entry: CanaryStage = {stage, size: limit, moved: result.counts.redriven, returned: 0, share: 0, watch_seconds: 0, returned_ids: [], counts: result.counts}
    report.stages.push(entry)
    hooks.checkpoint(report.stages, [...moved.keys()])
    if (result.counts.redriven === 0) break
    const enough = Math.ceil(plan.abortAt * result.counts.redriven)
    const watched = await hooks.watch({stage, moved, windowMs: plan.watchMs, enough: Math.max(1, enough)})
    entry.watch_seconds = Math.round(watched.watchedMs / 100) / 10
    entry.returned = watched.returned.length
    entry.returned_ids = watched.returned.map((view) => view.id as string)
    entry.share = entry.returned / Math.max(1, entry.moved)
    returnedViews.push(...watched.returned)
    if (watched.interrupted) {
      report.stopped_early = true
      report.stop_reason = 'interrupted'
    } else if (entry.returned > 0 && entry.share >= plan.abortAt) {
      entry.aborted = true
      report.aborted = true
      report.stopped_early = true
      report.stop_reason = `stage ${stage}: ${entry.returned} of ${entry.moved} moved came back (${percent(entry.share)} ≥ --abort-at ${percent(plan.abortAt)})`
    }
    hooks.checkpoint(report.stages, [])
    if (report.stopped_early || result.counts.redriven < limit) break
    size = Math.min(Number.MAX_SAFE_INTEGER, size * plan.ramp)
  }
  const groups = new Map<string, TriageGroup>()
  for (const view of returnedViews) addToGroup(groups, view, DEFAULT_GROUP_BY).count++
  report.returned = {count: returnedViews.length, ids: returnedViews.map((view) => view.id as string), groups: [...groups.values()].sort((a, b) => b.count - a.count)}
  return report
}

/** 5% for 0.05; one decimal when needed. */
export function percent(share: number): string {
  return `${Math.round(share * 1000) / 10}%`
}

function addCounts(sum: RedriveCounts, add: RedriveCounts): void {
  sum.redriven += add.redriven
  sum.failed += add.failed
  // Not selected, poison and held are seen again by each stage: the last stage's say how many stay.
  sum.skipped = add.skipped
  sum.poison = add.poison
  let held = 0
  for (const key of ['looping', 'still_invalid', 'returned'] as const) {
    if (add[key] === undefined) continue
    sum[key] = add[key]
    held += add[key]
  }
  // Every message the canary looked at, once: those moved, and those the last stage left.
  sum.examined = sum.redriven + sum.failed + sum.skipped + sum.poison + held
}
