import {Command} from '@oclif/core'

import {BqError, ExitCode, describeError} from '../errors.js'

/**
 * The base of every bq command: `--json` support, and the one place errors become output. A
 * BqError prints as a single line (or a JSON error object under --json) and exits with its
 * code; anything unexpected does too, with the stack only when BQ_DEBUG is set.
 */
export abstract class BqCommand extends Command {
  static override enableJsonFlag = true

  protected override async catch(error: Error & {oclif?: {exit?: number}; code?: string}): Promise<unknown> {
    // this.exit() and oclif's own parse errors (usage, exit 2) keep oclif's handling.
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
}
