import {Command} from '@oclif/core'
import type {Interfaces} from '@oclif/core'

import {chooseBroker, contextLine} from '../contexts/resolve.js'
import type {ContextInUse} from '../contexts/resolve.js'
import {BqError, BrokenPipeError, UsageError, outcomeOf} from '../errors.js'
import {visible} from '../output/control-chars.js'
import {failureJson, successJson} from '../output/json-output.js'
import type {JsonContext, JsonFailure, JsonSuccess} from '../output/json-output.js'
import {refuseEmptyNames} from './flags.js'

type OclifError = Error & {oclif?: {exit?: number}; code?: string; parse?: unknown}
/** oclif's own constraint on parsed flags and args (not exported by @oclif/core). */
type Parsed = {[name: string]: unknown}

/**
 * The base of every bq command, and the one place outcomes become output and exit codes.
 *
 * - A command returns its result on success (exit 0), or throws a BqError (src/lib/errors.ts):
 *   a failure, or an outcome such as a partial redrive, which carries its report. This class
 *   prints it as one line on stderr (or the JSON failure object under --json) and exits with
 *   its code; anything unexpected does too, with the stack only when BQ_DEBUG is set.
 * - Under --json every command prints one object: `{ok, result, warnings}` on success,
 *   `{ok, error, result?, warnings}` on failure (src/lib/output/json-output.ts).
 * - `this.warn()` is the one warning path: stderr, and the `warnings` list of the JSON output.
 * - A command with a `context` flag acts on a broker: parse() picks it (src/lib/contexts/resolve.ts)
 *   and, when a context is in use, says so in one stderr line and a JSON `context` field.
 */
export abstract class BqCommand extends Command {
  static override enableJsonFlag = true

  private readonly collectedWarnings: string[] = []

  /** The context this run acts through (--context, $BQ_CONTEXT, bq context use), if any. */
  protected brokerContext?: ContextInUse

  /** Prints a warning on stderr (also under --json) and records it for the JSON output. */
  override warn(input: string | Error): string | Error {
    const text = typeof input === 'string' ? input : input.message
    this.collectedWarnings.push(text)
    process.stderr.write(`Warning: ${visible(text)}\n`)
    return input
  }

  /** A note or summary line on stderr: names and bodies in it may hold control characters (control-chars.ts). */
  override logToStderr(message = '', ...args: unknown[]): void {
    super.logToStderr(visible(message), ...args)
  }

  /** oclif's parse, then the checks every command shares (src/lib/cli/flags.ts). */
  protected override async parse<F extends Parsed, B extends Parsed, A extends Parsed>(options?: Interfaces.Input<F, B, A>, argv?: string[]): Promise<Interfaces.ParserOutput<F, B, A>> {
    const parsed = await super.parse(options, argv)
    refuseEmptyNames(parsed.flags)
    if (Object.hasOwn(this.ctor.flags ?? {}, 'context')) this.useContext(parsed.flags as {broker?: string; context?: string | string[]})
    return parsed
  }

  /**
   * A context's URL (password filled in) becomes the --broker value, so every command's broker
   * code stays as it was; the operator is told which context and broker, always, on stderr.
   */
  private useContext(flags: {broker?: string; context?: string | string[]}): void {
    // A command that reads several contexts at once (bq trace) resolves them itself.
    if (Array.isArray(flags.context)) return
    const choice = chooseBroker({broker: flags.broker, context: flags.context})
    if (choice.context === undefined) return
    this.brokerContext = choice.context
    flags.broker = choice.url
    // The context's ledger is where this run is recorded and the loop guard reads; $BQ_LEDGER still wins.
    if (choice.context.ledger !== undefined && !process.env.BQ_LEDGER) process.env.BQ_LEDGER = choice.context.ledger
    process.stderr.write(`${contextLine(choice.context)}\n`)
  }

  protected override toSuccessJson(result: unknown): JsonSuccess {
    return successJson(result, this.collectedWarnings, this.jsonContext())
  }

  protected override toErrorJson(error: unknown): JsonFailure {
    const outcome = outcomeOf(error)
    return failureJson(outcome, outcome.result, this.collectedWarnings, this.jsonContext())
  }

  private jsonContext(): JsonContext | undefined {
    const context = this.brokerContext
    return context === undefined ? undefined : {name: context.name, broker: context.broker, protected: context.protected}
  }

  protected override async catch(raised: OclifError): Promise<unknown> {
    // this.exit(), below, is how the exit code leaves: oclif ends the process with it.
    if (raised.code === 'EEXIT' && !(raised instanceof BqError)) throw raised
    // oclif's own parse errors (unknown flag, missing argument) would print the whole help page.
    const isOclifError = !(raised instanceof BqError) && (raised.parse !== undefined || raised.oclif?.exit !== undefined)
    const error: Error = isOclifError ? this.usageError(raised.message) : raised
    const outcome = outcomeOf(error)
    // The reader went away (`bq peek | head`): there is no one left to tell.
    if (error instanceof BrokenPipeError) return this.exit(outcome.exitCode)
    if (this.jsonEnabled()) {
      this.logJson(this.toErrorJson(error))
    } else if (!outcome.reported) {
      process.stderr.write(`Error: ${visible(outcome.message)}\n`)
      if (!outcome.known && process.env.BQ_DEBUG) process.stderr.write(`${error.stack}\n`)
    }
    // oclif ends the process with process.exit(), which drops output still queued for a pipe
    // (a large --json report): let it out first.
    await Promise.all([written(process.stdout), written(process.stderr)])
    return this.exit(outcome.exitCode)
  }

  /** One line out of oclif's multi-line parse message, pointing at the command's help. */
  private usageError(message: string): UsageError {
    const lines = message.split('\n').map((line) => line.replace(/\s+/g, ' ').trim())
    // Drop oclif's trailing advice ("Note: …", "See more help …"): the pointer to --help replaces it.
    const end = lines.findIndex((line) => line.startsWith('Note:') || line.startsWith('See more help'))
    const text = (end === -1 ? lines : lines.slice(0, end)).filter((line) => line !== '').join(' ')
    return new UsageError(`${text} (see bq ${(this.id ?? '').replaceAll(':', ' ')} --help)`)
  }
}

/** Resolves once everything written to `stream` so far has been handed to the OS (or the stream failed). */
function written(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || !stream.writable) resolve()
    else stream.write('', () => resolve())
  })
}
