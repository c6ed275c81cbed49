import {writeSync} from 'node:fs'

import {exitNow, signalExitCode} from '../errors.js'
import type {StopSignal} from '../errors.js'

/** SIGTERM (a service manager, `kill`, a CI timeout) and SIGHUP (the terminal went away) are treated as Ctrl-C. */
const SIGNALS: StopSignal[] = ['SIGINT', 'SIGTERM', 'SIGHUP']

export interface StopRequest {
  /** A stop was asked for: finish the current batch, then end with InterruptedError. */
  requested: () => boolean
  /** The signal that asked, for the exit code (128 + its number); undefined until one came. */
  signal: () => StopSignal | undefined
  dispose: () => void
}

/**
 * The first SIGINT, SIGTERM or SIGHUP asks a long operation to stop after its current batch (so
 * nothing is left half done; the run then ends with InterruptedError, exit 130, 143 or 129); a
 * second one exits at once with its own code (the broker or the staging list still holds every
 * message). `lastWords` is the one line that exit prints first: what had moved, and how to
 * return what the batch in flight left in staging (an operator must not be left guessing).
 */
export function stopOnInterrupt(options: {lastWords?: () => string | undefined} = {}): StopRequest {
  let received: StopSignal | undefined
  const handlers = SIGNALS.map((signal) => {
    const handler = () => {
      if (received !== undefined) {
        const words = lastWords(options.lastWords)
        // A synchronous write: the process ends on the next line.
        if (words !== undefined) say(`\n${words}\n`)
        exitNow(signalExitCode(signal))
      }
      received = signal
      // After a hang-up the terminal may be gone: a failed write must not end the run mid-batch.
      if (signal === 'SIGHUP') for (const stream of [process.stdout, process.stderr]) stream.on('error', () => {})
      const again = signal === 'SIGINT' ? 'Ctrl-C again' : `${signal} or Ctrl-C again`
      process.stderr.write(`\n${signal === 'SIGINT' ? '' : `${signal}: `}stopping after the current batch (${again} to exit now)\n`)
    }
    process.on(signal, handler)
    return {signal, handler}
  })
  return {
    requested: () => received !== undefined,
    signal: () => received,
    dispose: () => {
      // Once a stop was asked for, the handlers stay until the process ends: a second signal
      // during the shutdown (the report, closing connections) still exits with its own code.
      if (received !== undefined) return
      for (const {signal, handler} of handlers) process.off(signal, handler)
    },
  }
}

/** Writes to stderr at once; a stderr that cannot take it (gone, full) must not keep the exit from happening. */
function say(text: string): void {
  try {
    writeSync(2, text)
  } catch {
    // Nothing left to tell it to.
  }
}

/** The caller's last line, or nothing when it cannot say (an exit at once must not fail). */
function lastWords(say: (() => string | undefined) | undefined): string | undefined {
  try {
    return say?.()
  } catch {
    return undefined
  }
}
