import {Command} from '@oclif/core'

import {BqError, ExitCode, UsageError, describeError} from '../errors.js'

type OclifError = Error & {oclif?: {exit?: number}; code?: string; parse?: unknown}

/**
 * The base of every bq command: `--json` support, and the one place errors become output. A
 * BqError prints as a single line (or a JSON error object under --json) and exits with its
 * code; anything unexpected does too, with the stack only when BQ_DEBUG is set.
 */
export abstract class BqCommand extends Command {
  static override enableJsonFlag = true

  protected override async catch(raised: OclifError): Promise<unknown> {
    // oclif's own parse errors (unknown flag, missing argument) would print the whole help page.
    const isParseError = !(raised instanceof BqError) && raised.code !== 'EEXIT' && (raised.parse !== undefined || raised.oclif?.exit === ExitCode.usage)
    const error: OclifError = isParseError ? this.usageError(raised.message) : raised
    // this.exit() and oclif's other errors keep oclif's handling.
    if (error.code === 'EEXIT' || (error.oclif?.exit !== undefined && !(error instanceof BqError))) throw error
    const known = error instanceof BqError
    const exitCode = known ? error.exitCode : ExitCode.failure
    const code = known ? error.code : 'unexpected'
    const message = known ? error.message : `unexpected error: ${describeError(error)}`
    if (this.jsonEnabled()) {
      this.logJson({error: {code, message, exitCode}})
    } else {
      process.stderr.write(`Error: ${message}\n`)
      if (!known && process.env.BQ_DEBUG) process.stderr.write(`${error.stack}\n`)
    }
    return this.exit(exitCode)
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
