/**
 * How long bq waits for a broker, set by one knob (`--timeout SECONDS`): connecting (socket,
 * handshake, login) and each operation once connected (a publish batch, a count, a read, an ack).
 * Without the knob: 10 s to connect, 30 s per operation. With it, both are that many seconds, so a
 * dead or hung broker costs at most about that long before exit 4.
 */
import {ConnectionError} from '../../errors.js'

export const DEFAULT_CONNECT_SECONDS = 10
export const DEFAULT_OPERATION_SECONDS = 30

export interface Timeouts {
  connectMs: number
  operationMs: number
  /** True when the operator set them (--timeout): messages then name the flag's value. */
  explicit: boolean
}

export const DEFAULT_TIMEOUTS: Timeouts = {connectMs: DEFAULT_CONNECT_SECONDS * 1000, operationMs: DEFAULT_OPERATION_SECONDS * 1000, explicit: false}

/** The timeouts for `--timeout SECONDS` (undefined: the defaults). */
export function timeoutsFor(seconds?: number): Timeouts {
  if (seconds === undefined) return DEFAULT_TIMEOUTS
  return {connectMs: seconds * 1000, operationMs: seconds * 1000, explicit: true}
}

/** `3 s`, `0.5 s`. */
export function secondsText(ms: number): string {
  return `${Math.round(ms / 100) / 10} s`
}

/** The tail of a timeout message: how to wait longer. */
export function waitLonger(timeouts: Timeouts): string {
  return timeouts.explicit ? 'raise --timeout to wait longer' : 'set --timeout SECONDS to wait longer'
}

/**
 * Resolves or rejects as `work` does, unless `ms` pass first: then rejects with `onTimeout()`.
 * `work` keeps running (nothing can cancel it); `abandoned` is told, so it can release what the
 * late answer would bring.
 */
export function withinDeadline<T>(work: Promise<T>, ms: number, onTimeout: () => Error, abandoned?: (late: Promise<T>) => void): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => {
      abandoned?.(work)
      reject(onTimeout())
    }, ms)
    work.then(
      (value) => {
        clearTimeout(timer)
        resolve(value)
      },
      (error: unknown) => {
        clearTimeout(timer)
        reject(error)
      },
    )
  })
}

/** The one-line error for a broker that did not answer in time (exit 4). */
export function timeoutError(broker: string, displayUrl: string, waitedFor: string, ms: number, timeouts: Timeouts): ConnectionError {
  return new ConnectionError(`${broker} at ${displayUrl} did not answer within ${secondsText(ms)} while ${waitedFor}; ${waitLonger(timeouts)}`)
}
