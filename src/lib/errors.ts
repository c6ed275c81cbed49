/**
 * The one place bq's errors and exit codes live. Every failure a user can cause or meet is a
 * BqError: the CLI prints its message on one line and exits with its code, never a stack trace.
 */

/** Stable exit codes, documented in the README. */
export const ExitCode = {
  ok: 0,
  /** Something failed, or invalid input was found (validate). */
  failure: 1,
  /** Bad flags, arguments or configuration. */
  usage: 2,
  /** A redrive or replay moved some selected messages but not all. */
  partial: 3,
  /** The broker could not be reached, or refused the credentials. */
  connection: 4,
  /** Interrupted (SIGINT); what was in flight is reported. */
  interrupted: 130,
} as const

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode]

export class BqError extends Error {
  readonly exitCode: number
  readonly code: string

  constructor(message: string, options: {exitCode?: number; code?: string; cause?: unknown} = {}) {
    super(message, options.cause === undefined ? undefined : {cause: options.cause})
    this.name = 'BqError'
    this.exitCode = options.exitCode ?? ExitCode.failure
    this.code = options.code ?? 'failure'
  }
}

/** Bad flags, arguments or configuration: exit 2. */
export class UsageError extends BqError {
  constructor(message: string, code = 'usage') {
    super(message, {exitCode: ExitCode.usage, code})
    this.name = 'UsageError'
  }
}

/** The broker is unreachable or refused us: exit 4. The message must already be redacted. */
export class ConnectionError extends BqError {
  constructor(message: string, cause?: unknown) {
    super(message, {exitCode: ExitCode.connection, code: 'connection', cause})
    this.name = 'ConnectionError'
  }
}

/** A one-line description of any thrown value, for messages that wrap a lower-level error. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message.split('\n')[0] || error.name
  return String(error)
}
