/**
 * The one shape of every command's `--json` output (documented in docs/output-and-exit-codes.md):
 *
 *   {"ok": true,  "result": {...}, "warnings": [...]}
 *   {"ok": false, "error": {"code", "message", "exit_code"}, "result"?: {...}, "warnings": [...]}
 *
 * `ok` is true exactly when the exit code is 0. A failure carries `result` when the run did
 * something worth reporting before it ended (a partial or interrupted redrive's full report,
 * validate's results). `warnings` is always present.
 *
 * A run through a named context (bq context) adds a last key, `"context": {"name", "broker",
 * "protected"}`; without one the keys are exactly those above.
 */

export interface JsonError {
  code: string
  message: string
  exitCode: number
}

/** The error as printed: snake_case like every other key bq writes. */
export interface JsonErrorOut {
  code: string
  message: string
  exit_code: number
}

/** The context a run acted through; the broker URL carries no password. */
export interface JsonContext {
  name: string
  broker: string
  protected: boolean
}

export interface JsonSuccess<T = unknown> {
  ok: true
  result: T
  warnings: string[]
  context?: JsonContext
}

export interface JsonFailure<T = unknown> {
  ok: false
  error: JsonErrorOut
  result?: T
  warnings: string[]
  context?: JsonContext
}

export type JsonOutput<T = unknown> = JsonSuccess<T> | JsonFailure<T>

export function successJson<T>(result: T, warnings: readonly string[], context?: JsonContext): JsonSuccess<T> {
  return {ok: true, result, warnings: [...warnings], ...(context === undefined ? {} : {context})}
}

export function failureJson(error: JsonError, result: unknown, warnings: readonly string[], context?: JsonContext): JsonFailure {
  return {ok: false, error: {code: error.code, message: error.message, exit_code: error.exitCode}, ...(result === undefined ? {} : {result}), warnings: [...warnings], ...(context === undefined ? {} : {context})}
}
