/**
 * The one place bq's outcomes and exit codes live. Every failure a user can cause or meet, and
 * every run that did not fully succeed (a partial redrive, an interrupted one, invalid input
 * found by validate, a declined confirmation), is a BqError with a stable `code` and an
 * `exitCode` from the table below. Commands throw them; BqCommand (src/lib/cli/base-command.ts)
 * is the only code that turns one into output and a process exit code. The single exception is
 * `exitNow`, for a second Ctrl-C (or SIGTERM, SIGHUP), which must not wait for anything.
 */

/** Stable exit codes, documented in README.md and docs/output-and-exit-codes.md. */
export const ExitCode = {
  ok: 0,
  /** Something failed, or invalid input was found (validate). */
  failure: 1,
  /** Bad flags, arguments or configuration; confirmation needed (--yes) or declined. */
  usage: 2,
  /** A redrive or replay left some selected messages unmoved. */
  partial: 3,
  /** The broker could not be reached (network, TLS, a broker that stays unavailable): worth a retry later. */
  connection: 4,
  /** An alert fired: `bq dlq ls --fail-above` or `--max-age` found a DLQ past its threshold. */
  alert: 5,
  /**
   * The broker refused who we are or what we asked: wrong credentials, a SASL failure, a missing
   * ACL permission. Retrying the same command cannot help, so it is not exit 4.
   */
  auth: 6,
  /** `bq schema compat` found changes it cannot prove compatible, and none it knows to break. */
  unproven: 7,
  /** A canary redrive stopped: the share of a stage's messages that came back to the DLQ reached --abort-at. */
  canaryAborted: 8,
  /** Hung up (SIGHUP, 128 + 1): stopped as for Ctrl-C; what was in flight is reported. */
  hangup: 129,
  /** Interrupted (SIGINT, Ctrl-C, 128 + 2); what was in flight is reported. */
  interrupted: 130,
  /** Terminated (SIGTERM, 128 + 15): stopped as for Ctrl-C; what was in flight is reported. */
  terminated: 143,
} as const

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode]

export interface BqErrorOptions {
  exitCode?: number
  code?: string
  cause?: unknown
  /** What the run did before it ended this way (a redrive report); carried into the JSON output. */
  result?: unknown
  /** The human output already told the story (a summary line): print no `Error:` line. */
  reported?: boolean
}

export class BqError extends Error {
  readonly exitCode: number
  readonly code: string
  readonly result: unknown
  readonly reported: boolean

  constructor(message: string, options: BqErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : {cause: options.cause})
    this.name = 'BqError'
    this.exitCode = options.exitCode ?? ExitCode.failure
    this.code = options.code ?? 'failure'
    this.result = options.result
    this.reported = options.reported ?? false
  }
}

/** Bad flags, arguments or configuration: exit 2. */
export class UsageError extends BqError {
  constructor(message: string, code = 'usage') {
    super(message, {exitCode: ExitCode.usage, code})
    this.name = 'UsageError'
  }
}

/**
 * A destructive command was not confirmed: exit 2, and nothing was changed. `not-confirmed` when
 * the operator answered no; `confirmation-needed` when there was no terminal to ask and no --yes;
 * `protected-context` when a protected context refused --yes (src/lib/cli/guardrails.ts).
 */
export class NotConfirmedError extends UsageError {
  constructor(message = 'not confirmed: nothing was changed', code: 'not-confirmed' | 'confirmation-needed' | 'protected-context' = 'not-confirmed') {
    super(message, code)
    this.name = 'NotConfirmedError'
  }
}

/**
 * The broker is unreachable: exit 4. `tls` when the TLS handshake failed (an untrusted, expired or
 * wrong-host certificate, a client certificate the broker wants). The message must already be redacted.
 */
export class ConnectionError extends BqError {
  constructor(message: string, cause?: unknown, code: 'connection' | 'tls' = 'connection') {
    super(message, {exitCode: ExitCode.connection, code, cause})
    this.name = 'ConnectionError'
  }
}

/**
 * The broker refused the credentials (`auth`: a wrong password, a failed SASL exchange, a missing
 * or rejected token) or a permission (`permission`: an ACL that does not allow the command, a
 * vhost or queue the user may not use): exit 6. The message names the credential or permission,
 * never the secret, and must already be redacted.
 */
export class AuthError extends BqError {
  constructor(message: string, code: 'auth' | 'permission' = 'auth', cause?: unknown, result?: unknown) {
    super(message, {exitCode: ExitCode.auth, code, cause, result})
    this.name = 'AuthError'
  }
}

/** 'auth' or 'permission' when `error` is an AuthError (a run stopped by a refusal reports it), else undefined. */
export function refusalOf(error: unknown): 'auth' | 'permission' | undefined {
  return error instanceof AuthError ? (error.code as 'auth' | 'permission') : undefined
}

/**
 * The queue (topic, entity) does not exist, on a broker where queues exist apart from their
 * messages (SQS, Artemis, Service Bus, Pulsar and Kafka topics, RabbitMQ): exit 1. On Redis and
 * the embedded store a missing queue is an empty one. The message must already be redacted.
 */
export class QueueNotFoundError extends BqError {
  constructor(message: string, cause?: unknown) {
    super(message, {exitCode: ExitCode.failure, code: 'queue-not-found', cause})
    this.name = 'QueueNotFoundError'
  }
}

/** validate found invalid input: exit 1, with the full validation result. */
export class InvalidInputError extends BqError {
  constructor(message: string, result: unknown) {
    super(message, {exitCode: ExitCode.failure, code: 'invalid-input', result, reported: true})
    this.name = 'InvalidInputError'
  }
}

/**
 * `bq schema compat` could not prove a change compatible (a pattern replaced by another, a
 * oneOf restructured) and found nothing it knows to break: exit 7, with the full report.
 */
export class UnprovenError extends BqError {
  constructor(message: string, result: unknown) {
    super(message, {exitCode: ExitCode.unproven, code: 'unproven', result, reported: true})
    this.name = 'UnprovenError'
  }
}

/**
 * A canary redrive (dlq redrive --canary) aborted: a stage's messages came back to the DLQ at or
 * above --abort-at. The rest stay on the DLQ; exit 8, with the report of every stage.
 */
export class CanaryAbortedError extends BqError {
  constructor(message: string, report: unknown) {
    super(message, {exitCode: ExitCode.canaryAborted, code: 'canary-aborted', result: report})
    this.name = 'CanaryAbortedError'
  }
}

/** A redrive or replay left selected messages unmoved: exit 3, with the full report. */
export class PartialError extends BqError {
  constructor(message: string, report: unknown) {
    super(message, {exitCode: ExitCode.partial, code: 'partial', result: report, reported: true})
    this.name = 'PartialError'
  }
}

/** `bq dlq ls` found a DLQ past --fail-above or --max-age: exit 5, with the full listing. */
export class AlertError extends BqError {
  constructor(message: string, report: unknown) {
    super(message, {exitCode: ExitCode.alert, code: 'alert', result: report})
    this.name = 'AlertError'
  }
}

/** The signals bq treats as "stop after the current batch". */
export type StopSignal = 'SIGINT' | 'SIGTERM' | 'SIGHUP'

/** The shell's convention, 128 + the signal's number: 130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP. */
export function signalExitCode(signal: StopSignal): ExitCodeValue {
  if (signal === 'SIGTERM') return ExitCode.terminated
  if (signal === 'SIGHUP') return ExitCode.hangup
  return ExitCode.interrupted
}

/**
 * A signal stopped a run after its current batch: exit 128 + the signal's number, with the report
 * of what moved. Without a report (Ctrl-C at a prompt, before anything ran) the message is printed.
 */
export class InterruptedError extends BqError {
  constructor(message: string, report?: unknown, signal: StopSignal = 'SIGINT') {
    super(message, {exitCode: signalExitCode(signal), code: 'interrupted', result: report, reported: report !== undefined})
    this.name = 'InterruptedError'
  }
}

/**
 * The reader of stdout went away (`bq peek | head`): a normal end, as for Unix tools. BqCommand
 * exits with 0 and prints nothing (there is nowhere to print to).
 */
export class BrokenPipeError extends BqError {
  constructor() {
    super('the reader of the output went away', {exitCode: ExitCode.ok, code: 'broken-pipe', reported: true})
    this.name = 'BrokenPipeError'
  }
}

/** The stable description of any thrown value: what `--json` reports and what the exit code is. */
export interface Outcome {
  code: string
  message: string
  exitCode: number
  /** A BqError (expected); anything else is an unexpected error, worth a stack under BQ_DEBUG. */
  known: boolean
  result?: unknown
  reported: boolean
}

export function outcomeOf(error: unknown): Outcome {
  if (error instanceof BqError) {
    return {code: error.code, message: error.message, exitCode: error.exitCode, known: true, reported: error.reported, ...(error.result === undefined ? {} : {result: error.result})}
  }
  return {code: 'unexpected', message: `unexpected error: ${describeError(error)}`, exitCode: ExitCode.failure, known: false, reported: false}
}

/**
 * The same failure (message, code, exit code), carrying what the run did before it ended: a
 * redrive that lost its broker part-way reports what moved. Anything not a BqError is returned
 * unchanged (an unexpected error keeps its stack for BQ_DEBUG).
 */
export function withResult(error: unknown, result: unknown): unknown {
  if (!(error instanceof BqError)) return error
  const carried = new BqError(error.message, {exitCode: error.exitCode, code: error.code, cause: error.cause ?? error, result, reported: error.reported})
  carried.name = error.name
  return carried
}

/**
 * Ends the process at once with `code`. Only for a second Ctrl-C, SIGTERM or SIGHUP ("exit now"),
 * which must not wait for the current batch; every other exit goes through BqCommand.
 */
export function exitNow(code: ExitCodeValue): never {
  process.exit(code)
}

/** A one-line description of any thrown value, for messages that wrap a lower-level error. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message.split('\n')[0] || error.name
  return String(error)
}
