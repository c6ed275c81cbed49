import type {BrokerAdapter} from '../brokers/adapter.js'
import {AuthError, BqError, InterruptedError, PartialError, withResult} from '../errors.js'
import type {StopSignal} from '../errors.js'
import type {RedriveItem, RedriveReport} from '../ops/redrive-types.js'
import {startProgress} from '../output/progress.js'
import {failureLines, itemPrinter, summaryLine} from '../output/redrive-report.js'
import type {OutcomeLabels} from '../output/redrive-report.js'
import {OutputWriter} from '../output/writer.js'
import type {Run, RunTally} from '../ledger/record.js'
import {stopOnInterrupt} from './interrupt.js'

export type MoveResult = RedriveReport & {items: RedriveItem[]; /** The run ledger id (bq runs show), when the run was recorded. */ run_id?: string}

/** The stop reason of a run whose output closed (`… --list | head`): it stops as for Ctrl-C, exit 3. */
export const OUTPUT_CLOSED = 'the output closed (its reader went away); the rest stay where they were'

/** How runMoves reports a run. */
export interface MoveOptions {
  json: boolean
  /** Print one line per message. */
  list: boolean
  /** The past participle the summary uses: moved, published, purged, returned. */
  verb: string
  log: (line: string) => void
  /** How many messages the run may examine, for the progress line. */
  total?: number
  onItem?: (item: RedriveItem) => void
  labels?: OutcomeLabels
  /** The command that returns what a run stopped at once left in staging (`bq dlq recover …`). */
  recover?: string
  /** A dry run: its progress line and last words count what would move, never "moved". */
  dryRun?: boolean
}

/**
 * What redrive and replay share around their engines: Ctrl-C, SIGTERM or SIGHUP stops after the
 * batch, and so does a closed output (a run must not go on moving what no one sees any more);
 * per-message lines when asked, the summary on stderr, and items under --json. A run that did not
 * move every selected message ends in PartialError (exit 3), an interrupted one in
 * InterruptedError (130, 143 or 129 by signal); both carry the full report, which BqCommand
 * prints under --json.
 */
export async function runMoves(
  options: MoveOptions,
  run: (hooks: {onItem: (item: RedriveItem) => void; stopRequested: () => boolean}) => Promise<RedriveReport>,
): Promise<MoveResult> {
  // The progress line first: on a signal it clears itself before the interrupt's message.
  const wouldBe = options.labels?.would_redrive ?? `would be ${options.verb}`
  const movedLabel = options.dryRun ? wouldBe : options.labels?.redriven
  const progress = startProgress({unit: 'examined', total: options.total, moves: true, movedLabel, json: options.json})
  const counts = {examined: 0, moved: 0, failed: 0}
  const interrupt = stopOnInterrupt({lastWords: () => stoppedAtOnce(counts, options.dryRun ? wouldBe : options.verb, options.recover)})
  const out = new OutputWriter()
  out.statusLine = progress
  const items: RedriveItem[] = []
  const listing = !options.json && options.list
  const print = itemPrinter(out, listing, options.labels)
  // Without --list or --json the summary's "N failed" of a finished run would be all an operator
  // sees of why.
  const failures = new Map<string, number>()
  const explainFailures = () => {
    if (!options.json && !listing) for (const line of failureLines(failures)) options.log(line)
  }
  // --list lines go out as each batch ends (the engines yield between batches), not at the end;
  // a failed write (a closed pipe) is kept by the writer and thrown by the last flush below.
  let flushing: Promise<void> = Promise.resolve()
  let scheduled = false
  const flushSoon = () => {
    if (scheduled) return
    scheduled = true
    setImmediate(() => {
      scheduled = false
      flushing = flushing.then(() => out.flush()).catch(() => {})
    })
  }
  // A closed pipe is the end of the listing, not a failure of the run: the report still goes to stderr.
  const finishOutput = async () => {
    await flushing
    await out.flush().catch((error: unknown) => {
      if (!out.closed) throw error
    })
  }
  try {
    const report = await run({
      stopRequested: () => interrupt.requested() || out.closed,
      onItem: (item) => {
        if (options.json) items.push(item)
        options.onItem?.(item)
        print(item)
        if (listing) flushSoon()
        counts.examined++
        if (item.outcome === 'redriven' || item.outcome === 'would_redrive') counts.moved++
        if (item.outcome === 'failed') {
          counts.failed++
          const reason = item.error ?? 'no reason given'
          failures.set(reason, (failures.get(reason) ?? 0) + 1)
        }
        progress.update(counts.examined, counts)
      },
    })
    progress.stop()
    await finishOutput()
    if (out.closed && report.stop_reason === 'interrupted' && !interrupt.requested()) report.stop_reason = OUTPUT_CLOSED
    if (!options.json) options.log(summaryLine(report, options.verb))
    explainFailures()
    const result: MoveResult = {...report, items}
    const unfinished = unfinishedRun(result, options.verb, interrupt.signal())
    if (unfinished !== undefined) throw unfinished
    return result
  } catch (error) {
    // A run that failed part-way (its broker went) carries its report: say what moved, and list
    // the items under --json, as for a partial run; the error keeps its own code and exit code.
    progress.stop()
    if (!(error instanceof BqError) || !isRunReport(error.result)) throw error
    await finishOutput()
    // Here the error's own line says why the run failed (summary, then one error line).
    if (!options.json) options.log(summaryLine(error.result, options.verb))
    throw withResult(error, {...error.result, items})
  } finally {
    progress.stop()
    interrupt.dispose()
  }
}

/** The line a second signal prints before it exits at once: what moved, and how to recover the rest. */
function stoppedAtOnce(counts: {examined: number; moved: number}, verb: string, recover: string | undefined): string {
  const moved = `stopped at once: ${counts.moved} ${verb} of ${counts.examined} examined`
  if (recover === undefined) return `${moved}; the rest stay where they were`
  return `${moved}; messages of the batch in flight may be left in staging: run ${recover} (with the same --broker or --context) to return them`
}

/** What the run ledger keeps of a redrive or replay report (its counts; the ids are noted item by item). */
export function moveTally(result: unknown): RunTally {
  if (typeof result !== 'object' || result === null || !('counts' in result)) return {}
  return {counts: {...(result as RedriveReport).counts}}
}

/** moveTally with the counts named as the command's report names them (purged, copied). */
export function moveTallyAs(names: {done: string; would: string}): (result: unknown) => RunTally {
  return (result) => {
    const tally = moveTally(result)
    if (tally.counts === undefined) return tally
    const {redriven, would_redrive: would, ...rest} = tally.counts
    return {counts: {...rest, [names.done]: redriven, [names.would]: would}}
  }
}

/** Notes each message a run moved in the ledger's run (for runMoves' onItem). */
export function noteMoved(run: Run, what = 'moved'): (item: RedriveItem) => void {
  return (item) => {
    if (item.outcome === 'redriven' && item.id !== null) run.note(what, item.id)
  }
}

/** A report the engine attached to a failure, not yet with its items (runMoves adds them). */
function isRunReport(result: unknown): result is RedriveReport {
  return typeof result === 'object' && result !== null && 'counts' in result && !('items' in result)
}

/** The outcome of a run that did not move every selected message; undefined when it did. */
export function unfinishedRun(result: MoveResult, verb: string, signal: StopSignal = 'SIGINT'): BqError | undefined {
  const c = result.counts
  const done = result.dry_run ? `${c.would_redrive} would be ${verb}` : `${c.redriven} ${verb}`
  if (result.stop_reason === 'interrupted') return new InterruptedError(`interrupted (${signal}) after ${c.examined} examined: ${done}; the rest stay where they were`, result, signal)
  if (c.failed > 0 || result.stopped_early) {
    const stop = result.stopped_early && result.stop_reason ? `; stopped early: ${result.stop_reason}` : ''
    // A refusal is not worth a retry (exit 6); the report says what moved, and nothing else was touched.
    if (result.stop_refusal !== undefined) {
      return new AuthError(`the broker refused ${result.stop_refusal === 'auth' ? 'the credentials' : 'a permission'} part-way: ${done}, ${c.failed} failed; every message not ${verb} is still where it was${stop}`, result.stop_refusal, undefined, result)
    }
    return new PartialError(`not every selected message ${result.dry_run ? 'could be' : 'was'} ${verb}: ${done}, ${c.failed} failed${stop}`, result)
  }
  return undefined
}

/** The warning for --bypass on a target that cannot carry the replay marker, or undefined. */
export function bypassWarning(target: BrokerAdapter, bypass: boolean): string | undefined {
  if (!bypass || (target.capabilities.bypassMarker ?? target.capabilities.headers)) return undefined
  return `${target.kind} messages carry no headers, so --bypass cannot stamp bq-replay-bypass there (a no-op); use a sandbox queue with --to instead`
}
