import {createRequire} from 'node:module'

import type {SingleBar} from 'cli-progress'

/**
 * The progress line of a long run (redrive, replay, publish --count, peek exports) on stderr:
 * count, rate, and, when the total is known, a bar and the ETA; moved/failed/left for moves.
 *
 * cli-progress draws it: it redraws at most 10 times a second (fps), computes the ETA, and
 * draws nothing off a terminal. It is shown only when stderr is a terminal and not under --json
 * (a script reading the output must never get escape codes), and cleared when the run ends, a
 * signal arrives (before the "stopping…" line) or the process exits.
 */
export interface Progress {
  /** `done` messages handled so far; for moves, how many moved and failed. */
  update(done: number, moves?: {moved: number; failed: number}): void
  /** Takes the line off the screen while lines are written to the same terminal (see OutputWriter.statusLine). */
  clear(): void
  /** Draws it again after clear(). */
  redraw(): void
  /** Clears it for good. Safe to call twice. */
  stop(): void
}

export interface ProgressOptions {
  /** What is counted, e.g. "examined", "published", "exported". */
  unit: string
  /** How many there will be, when known (a DLQ's depth, --count); the ETA needs it. */
  total?: number
  /** Show moved/failed/left (redrive, replay). */
  moves?: boolean
  /** What a done move is called (default "moved"; a purge's "purged", a copy's "copied"). */
  movedLabel?: string
  json: boolean
}

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const

const noProgress: Progress = {update() {}, clear() {}, redraw() {}, stop() {}}

export function startProgress(options: ProgressOptions, stream: NodeJS.WriteStream = process.stderr): Progress {
  if (options.json || !stream.isTTY || process.env.TERM === 'dumb') return noProgress
  // cli-progress is CommonJS and needed only on a terminal: loaded here, not at start-up.
  const {SingleBar} = createRequire(import.meta.url)('cli-progress') as typeof import('cli-progress')
  const known = options.total !== undefined && options.total > 0
  // Short enough for 80 columns; for moves "left" says what the count is.
  const moves = options.moves ? ` | {moved} ${options.movedLabel ?? 'moved'}, {failed} failed` + (known ? ', {left} left' : '') : ''
  const unit = options.moves && known ? '' : ` ${options.unit}`
  const format = known ? `{bar} {value}/{total}${unit}${moves} | {rate}/s | ETA {eta_formatted}` : `{value} ${options.unit}${moves} | {rate}/s`
  const bar: SingleBar = new SingleBar({
    stream,
    format,
    fps: 10,
    barsize: 12,
    // The line may have been cleared for output in between: draw it even when unchanged.
    forceRedraw: true,
    clearOnComplete: true,
    hideCursor: false,
    // Truncate to the width rather than turn the terminal's line wrapping off (a killed run would leave it off).
    linewrap: true,
    etaBuffer: 50,
  })
  const started = Date.now()
  let stopped = false
  const payload = (done: number, counts?: {moved: number; failed: number}) => {
    const seconds = (Date.now() - started) / 1000
    const rate = seconds > 0 ? done / seconds : 0
    return {rate: rate >= 100 ? Math.round(rate) : rate.toFixed(1), moved: counts?.moved ?? 0, failed: counts?.failed ?? 0, left: known ? Math.max(0, (options.total ?? 0) - done) : 0}
  }
  const clearLine = () => {
    if (!stopped) stream.write('\r\x1B[K')
  }
  const stop = () => {
    if (stopped) return
    bar.stop()
    stopped = true
    for (const signal of SIGNALS) process.off(signal, clearLine)
    process.off('exit', clearLine)
  }
  // Before the interrupt's "stopping after the current batch" line, and on a hard exit.
  for (const signal of SIGNALS) process.prependListener(signal, clearLine)
  process.once('exit', clearLine)
  bar.start(known ? (options.total ?? 0) : 0, 0, payload(0))
  return {
    update: (done, counts) => {
      if (!stopped) bar.update(done, payload(done, counts))
    },
    clear: clearLine,
    redraw: () => {
      if (!stopped) bar.render()
    },
    stop,
  }
}
