/**
 * A Pulsar broker that has just (re)started is listening before it serves its topics: while it
 * loads a topic (its ledgers, cursors, ownership) the admin API answers HTTP 500/503 and the
 * WebSocket upgrade fails the same way. Seen right after a broker restart: a rerun that began
 * as soon as the port answered failed on `internalStats` with HTTP 500. bq waits such answers
 * out, within the operation timeout, instead of failing a run a second later would finish; if
 * they last, the broker counts as not available (exit 4, like an unreachable one).
 */
import {ConnectionError} from '../../errors.js'

/** The answers of a broker that is up but not (yet) serving the topic. */
export const NOT_READY_STATUSES: ReadonlySet<number> = new Set([500, 502, 503, 504])

/** First pause between tries; it doubles up to MAX_PAUSE_MS. */
const FIRST_PAUSE_MS = 250
const MAX_PAUSE_MS = 2000

/** A 5xx answer that was still the answer when the time to wait ran out: exit 4. */
export class BrokerNotReadyError extends ConnectionError {
  constructor(message: string) {
    super(message)
    this.name = 'BrokerNotReadyError'
  }
}

/** Why a not-ready answer is an error after bq waited it out, for messages. */
export function notReadyReason(status: number, waitedMs: number): string {
  return `the broker still answered HTTP ${status} after ${(waitedMs / 1000).toFixed(0)} s of tries (starting, or not serving this topic; --timeout waits longer)`
}

/**
 * Runs `attempt` until it gives an answer that is not a not-ready one, or `waitMs` has passed
 * (then the last answer stands). `isNotReady` tells the two apart.
 */
export async function untilReady<T>(attempt: () => Promise<T>, isNotReady: (result: T) => boolean, waitMs: number): Promise<T> {
  const deadline = Date.now() + waitMs
  let pause = FIRST_PAUSE_MS
  for (;;) {
    const result = await attempt()
    if (!isNotReady(result) || Date.now() + pause > deadline) return result
    await new Promise((resolve) => setTimeout(resolve, pause))
    pause = Math.min(pause * 2, MAX_PAUSE_MS)
  }
}
