/**
 * Recording a run that changes a broker (publish, redrive, replay, recover, purge): one call,
 * `recordRun(info, work)`, around the command's work. Who, when, where, the command line (secrets
 * hidden), the selection, the counts, the outcome and the ids moved, published or deleted go to
 * the ledger (store.ts). The ledger never stands in the broker operation's way: a failure to write
 * it is a warning, and the run goes on. Dry runs change nothing and are not recorded.
 */
import {randomUUID} from 'node:crypto'
import {hostname, userInfo} from 'node:os'

import {redactUrl} from '../brokers/shared/redact.js'
import {describeError, outcomeOf} from '../errors.js'
import {shellWord} from '../output/shell-word.js'
import {LedgerStore, explicitLedger, ledgerPath} from './store.js'

export interface RunInfo {
  /** The command as typed after `bq`: `dlq redrive`, `replay`. */
  command: string
  /** The broker acted on, as displayUrl (password hidden). */
  broker: string
  targetBroker?: string
  /** The queue or file read from, and the queue written to, where the command has them. */
  source?: string
  target?: string
  /** What the run was told to act on: --select, --max, --to, … */
  selection: Record<string, unknown>
  /** --reason. */
  reason?: string
  dryRun?: boolean
  /** The ids the run notes as `moved` were redriven: the loop guard counts them (bq_redriven). */
  redrive?: boolean
}

export interface RunTally {
  counts?: Record<string, number>
  ids?: Record<string, string[]>
}

export interface RecordOptions {
  /** How a warning reaches the operator (BqCommand.warn). */
  warn: (text: string) => void
  /** The counts (and ids) of a finished run, from its result, or from the result a failure carried. */
  tally: (result: unknown) => RunTally
  /** Where to say the run was recorded (stderr; nothing under --json, whose result has run_id). */
  log?: (line: string) => void
  /** The process's arguments; default process.argv after the script. */
  argv?: string[]
}

/** The run being recorded: its id (for the `bq-run-id` header) and the ids it touched. */
export class Run {
  readonly id = randomUUID()
  private readonly touched: Record<string, string[]> = {}

  /** The ledger holds this run (false for a dry run, or when the ledger could not be written). */
  recorded = false

  /** Writes to the ledger while the run goes on (set by recordRun once the run is recorded). */
  live?: {saveStages: (stages: Array<Record<string, unknown>>) => void; rememberRedriven: (ids: string[]) => void}

  /** Saves a canary's stages so far, and the ids its stage moved, before the next stage starts. */
  checkpoint(stages: Array<Record<string, unknown>>, movedIds: string[]): void {
    this.live?.rememberRedriven(movedIds)
    this.live?.saveStages(stages)
  }

  /** Notes a message id by what happened to it (`moved`, `published`, `deleted`). */
  note(what: string, id: string): void {
    ;(this.touched[what] ??= []).push(id)
  }

  /** The noted ids merged with those a tally found. */
  ids(extra: Record<string, string[]> = {}): Record<string, string[]> {
    const all: Record<string, string[]> = {...this.touched}
    for (const [what, ids] of Object.entries(extra)) all[what] = [...(all[what] ?? []), ...ids]
    return all
  }
}

export async function recordRun<T>(info: RunInfo, work: (run: Run) => Promise<T>, options: RecordOptions): Promise<T> {
  const run = new Run()
  if (info.dryRun === true) return work(run)
  const ledger = openLedger(options.warn)
  let started = false
  if (ledger !== undefined) {
    started = attempt(options.warn, 'record the start of this run', () =>
      ledger.start({
        id: run.id, startedAt: Date.now(), user: currentUser(), host: hostname(), command: info.command,
        commandLine: commandLine(options.argv ?? process.argv.slice(2)), broker: info.broker, targetBroker: info.targetBroker,
        source: info.source, target: info.target, selection: info.selection, reason: info.reason,
      }),
    )
  }
  // Only a recorded run stamps its id on copies: a header must lead to a run `bq runs show` knows.
  run.recorded = started
  if (started && ledger !== undefined) {
    run.live = {
      saveStages: (stages) => attempt(options.warn, `record the stages of run ${run.id}`, () => ledger.saveStages(run.id, stages)),
      rememberRedriven: (ids) => attempt(options.warn, `record the ids run ${run.id} moved`, () => ledger.noteRedriven(run.id, ids)),
    }
  }
  const finish = (outcome: string, exitCode: number, result: unknown, error?: string) => {
    if (ledger === undefined) return
    if (started) {
      const tally = safeTally(options.tally, result)
      const ids = run.ids(tally.ids)
      attempt(options.warn, `record the end of run ${run.id}`, () => ledger.end(run.id, {endedAt: Date.now(), outcome, exitCode, error, counts: tally.counts, ids}))
      if (info.redrive === true && ids.moved !== undefined) run.live?.rememberRedriven(ids.moved)
    }
    run.live = undefined
    attempt(options.warn, 'close the ledger', () => ledger.close())
    // A failed run's one line is its error (the ledger has it all the same).
    if (started && outcome === 'ok') options.log?.(`recorded as run ${run.id} (bq runs show ${run.id.slice(0, 8)})`)
  }
  try {
    const result = await work(run)
    finish('ok', 0, result)
    return result
  } catch (error) {
    const outcome = outcomeOf(error)
    const kind = outcome.code === 'partial' ? 'partial' : outcome.code === 'interrupted' ? 'interrupted' : 'failed'
    finish(kind, outcome.exitCode, outcome.result, outcome.message)
    throw error
  }
}

function openLedger(warn: (text: string) => void): LedgerStore | undefined {
  const path = ledgerPath()
  try {
    return LedgerStore.open(path, {create: true, createDirectory: explicitLedger() === undefined})
  } catch (error) {
    warn(`cannot open the run ledger ${path} (${describeError(error)}): this run is not recorded`)
    return undefined
  }
}

/** Runs a ledger write; a failure becomes a warning (the broker operation goes on). */
function attempt(warn: (text: string) => void, what: string, write: () => void): boolean {
  try {
    write()
    return true
  } catch (error) {
    warn(`cannot ${what} in the run ledger (${describeError(error)})`)
    return false
  }
}

function safeTally(tally: (result: unknown) => RunTally, result: unknown): RunTally {
  try {
    return result === undefined ? {} : tally(result)
  } catch {
    return {}
  }
}

function currentUser(): string {
  try {
    return userInfo().username
  } catch {
    return process.env.USER ?? process.env.USERNAME ?? 'unknown'
  }
}

/** Flags whose value is message data (possibly personal), recorded by size only. */
const DATA_FLAGS = new Set(['-d', '--data'])

/** The command line as typed, with every URL's secrets hidden and message data left out. */
export function commandLine(argv: string[]): string {
  const shown: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    const inline = /^(--data|-d)=(.*)$/s.exec(arg)
    if (inline !== null) shown.push(`${inline[1]}=<${Buffer.byteLength(inline[2])} bytes>`)
    else if (DATA_FLAGS.has(arg) && i + 1 < argv.length) shown.push(arg, `<${Buffer.byteLength(argv[++i])} bytes>`)
    else shown.push(redactUrl(arg))
  }
  return shown.map(shellWord).join(' ')
}
