/**
 * `dlq redrive --canary N`: the flags read, the refusals made before anything moves, and the
 * canary (ops/canary.ts) run with each stage through runMoves (signals, progress, the summary
 * line) and each watch with its own stop on a signal and a status line on a terminal.
 */
import type {BrokerAdapter} from '../brokers/adapter.js'
import {CanaryAbortedError, InterruptedError, UsageError} from '../errors.js'
import type {Run} from '../ledger/record.js'
import {canaryRedrive, percent, stageSizes} from '../ops/canary.js'
import type {CanaryPlan, CanaryReport, CanaryStage} from '../ops/canary.js'
import {watchReturns} from '../ops/canary-watch.js'
import type {HoldRule, RedriveItem} from '../ops/redrive-types.js'
import {startCanaryStatus} from '../output/canary-status.js'
import {renderTable} from '../output/table.js'
import {parseDuration} from './duration.js'
import {stopOnInterrupt} from './interrupt.js'
import type {MoveResult} from './move-run.js'

export interface CanaryFlags {
  canary?: number
  watch?: string
  'abort-at'?: string
  ramp?: number
  max: number
  copy?: boolean
}

/** --watch, --abort-at and --ramp when not given (flags with a default could not require --canary). */
export const CANARY_DEFAULTS = {watch: '60s', abortAt: '5%', ramp: 4}

/** The canary's plan from its flags, or undefined without --canary; bad values are usage errors. */
export function canaryPlanOf(flags: CanaryFlags): CanaryPlan | undefined {
  if (flags.canary === undefined) return undefined
  if (flags.copy) throw new UsageError('--canary moves messages and watches whether they come back; --copy leaves the originals: use one of them')
  const given = flags['abort-at'] ?? CANARY_DEFAULTS.abortAt
  const share = /^(\d+(?:\.\d+)?)%$/.exec(given.trim())
  const abortAt = share === null ? Number.NaN : Number(share[1]) / 100
  if (!(abortAt > 0 && abortAt <= 1)) throw new UsageError(`--abort-at "${given}": expected a percentage above 0 and at most 100, such as 5% or 0.5%`)
  return {size: flags.canary, watchMs: parseDuration(flags.watch ?? CANARY_DEFAULTS.watch, '--watch'), abortAt, ramp: flags.ramp ?? CANARY_DEFAULTS.ramp, max: flags.max}
}

/**
 * Refused before the question: where reading the DLQ costs deliveries, every watch takes every
 * message on it and hands it back, once per stage.
 */
export async function checkWatchCost(source: BrokerAdapter, dlq: string, accepted: boolean): Promise<void> {
  // With a true peek the watch browses (Service Bus peeks even where a receive would count).
  if (source.capabilities.truePeek) return
  const cost = await source.readsCostDeliveries?.(dlq)
  if (cost === undefined || accepted) return
  const limit = cost.limit === undefined ? '' : ` (delivery limit ${cost.limit})`
  throw new UsageError(`${cost.queue}${limit} counts deliveries: each stage of a canary reads the DLQ once after its watch window, taking every message on it and handing it back, which ${cost.cost}. Nothing was read; add --accept-delivery-cost to run the canary anyway (one delivery per message on the DLQ per stage)`, 'delivery-cost')
}

/** A dry run's stage plan, from what the dry run would move. */
export function stagePlan(plan: CanaryPlan, wouldMove: number): {stages: number[]; watch_seconds: number; abort_at: number} {
  return {stages: stageSizes(plan, wouldMove), watch_seconds: plan.watchMs / 1000, abort_at: plan.abortAt}
}

export function stagePlanLines(plan: CanaryPlan, wouldMove: number): string[] {
  const sizes = stageSizes(plan, wouldMove)
  if (sizes.length === 0) return ['canary plan: nothing would move']
  return [
    `canary plan: ${sizes.length} stage(s), each watched ${plan.watchMs / 1000}s; stops when ${percent(plan.abortAt)} of a stage comes back`,
    ...sizes.map((size, i) => `  stage ${i + 1}: move ${size}`),
  ]
}

export interface CanaryRunOptions {
  plan: CanaryPlan
  source: BrokerAdapter
  target: BrokerAdapter
  dlq: string
  json: boolean
  log: (line: string) => void
  ledger: Run
  /** One stage: the command's redrive through runMoves, limited, with the canary's hold added and its items also handed to `onItem`. */
  runStage: (stage: number, limit: number, hold: HoldRule, onItem: (item: RedriveItem) => void) => Promise<MoveResult>
}

export async function runCanary(options: CanaryRunOptions): Promise<CanaryReport & {run_id?: string}> {
  const {plan, source, dlq, json, log, ledger} = options
  const status = startCanaryStatus(json)
  /** The signal that stopped a watch, for the exit code. */
  let signal: ReturnType<ReturnType<typeof stopOnInterrupt>['signal']>
  const report = await canaryRedrive({dlq, source: source.displayUrl, target: options.target.displayUrl}, plan, {
    runStage: options.runStage,
    watch: async (request) => {
      const interrupt = stopOnInterrupt()
      try {
        const outcome = await watchReturns({
          ...request, source, dlq, stopRequested: interrupt.requested,
          onTick: (returned, left) => status.show(`stage ${request.stage}: ${request.moved.size} moved, ${returned} returned | watching ${Math.ceil(left / 1000)}s`),
        })
        status.stop()
        if (!json) log(`stage ${request.stage}: ${outcome.returned.length} of ${request.moved.size} moved came back within ${Math.round(outcome.watchedMs / 1000)}s`)
        if (outcome.interrupted) signal = interrupt.signal()
        return outcome
      } finally {
        status.stop()
        interrupt.dispose()
      }
    },
    checkpoint: (stages: CanaryStage[], movedIds: string[]) => ledger.checkpoint(stages as unknown as Array<Record<string, unknown>>, movedIds),
  })
  const result = ledger.recorded ? {...report, run_id: ledger.id} : report
  if (!json && report.returned.count > 0) {
    log(`${report.returned.count} moved message(s) came back to ${dlq}:`)
    const keys = ['reason', 'urn', 'exception', 'original_queue']
    log(await renderTable(['count', ...keys], report.returned.groups.map((group) => [String(group.count), ...keys.map((key) => group.key[key] ?? '-')])))
  }
  const moved = report.counts.redriven
  if (report.aborted) throw new CanaryAbortedError(`canary aborted: ${report.stop_reason}; ${moved} moved in all, the rest stay on ${dlq}`, result)
  if (report.stop_reason === 'interrupted') throw new InterruptedError(`interrupted while watching: ${moved} moved; the rest stay on ${dlq}`, result, signal ?? 'SIGINT')
  if (!json) log(`canary done: ${moved} moved in ${report.stages.length} stage(s), ${report.returned.count} came back`)
  return result
}
