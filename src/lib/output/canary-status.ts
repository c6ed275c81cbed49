/**
 * The canary's status line while a stage is watched: stage, moved, returned and the countdown, on
 * stderr, redrawn in place; only on a terminal and never under --json (as progress.ts's line).
 */
export interface CanaryStatus {
  show(text: string): void
  stop(): void
}

export function startCanaryStatus(json: boolean, stream: NodeJS.WriteStream = process.stderr): CanaryStatus {
  if (json || !stream.isTTY || process.env.TERM === 'dumb') return {show() {}, stop() {}}
  let shown = false
  const clear = () => {
    if (shown) stream.write('\r\x1B[K')
  }
  process.once('exit', clear)
  return {
    show: (text) => {
      // A terminal that reports no width (0) gets 80 columns.
      stream.write(`\r\x1B[K${text.slice(0, Math.max(20, (stream.columns || 80) - 1))}`)
      shown = true
    },
    stop: () => {
      clear()
      shown = false
      process.off('exit', clear)
    },
  }
}
