import type {Writable} from 'node:stream'

import {BrokenPipeError} from '../errors.js'

/**
 * Buffered output for commands that print a lot (a line per message). It batches writes,
 * respects back-pressure, and treats a closed pipe (`bq ... | head`) as a normal end: the next
 * flush throws BrokenPipeError, which BqCommand turns into a quiet exit 0.
 */
export class OutputWriter {
  /** Text and raw bytes (peek --raw) waiting to be written, in order. */
  private chunks: Array<string | Uint8Array> = []
  private buffered = 0
  /** Why the stream can take no more (BrokenPipeError when the reader went away). */
  private failure: Error | undefined
  /** A flush waiting for 'drain', to be failed when the stream fails instead. */
  private waiting: ((error: Error) => void) | undefined

  /**
   * A progress line on the same terminal (src/lib/output/progress.ts): taken off the screen
   * while lines are written to a terminal stdout, then drawn again, so the two never mix.
   */
  statusLine: {clear(): void; redraw(): void} | undefined

  /** The reader went away (EPIPE): a run that moves messages stops after its batch (move-run.ts). */
  get closed(): boolean {
    return this.failure instanceof BrokenPipeError
  }

  constructor(private readonly stream: Writable = process.stdout, private readonly flushAt = 64 * 1024) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      // EPIPE: the reader went away; stop writing quietly, as Unix tools do. Any other error
      // surfaces, like that one, from the next flush (never as an uncaught exception).
      this.chunks = []
      this.buffered = 0
      this.failure = error.code === 'EPIPE' ? new BrokenPipeError() : error
      this.waiting?.(this.failure)
    })
  }

  /** Text (written as UTF-8), or bytes written exactly as they are. */
  write(data: string | Uint8Array): void {
    if (this.failure !== undefined) return
    this.chunks.push(data)
    this.buffered += data.length
  }

  line(text = ''): void {
    this.write(text + '\n')
  }

  /** Flushes when enough is buffered; waits when the stream asks us to. */
  async maybeFlush(): Promise<void> {
    if (this.failure !== undefined) throw this.failure
    if (this.buffered >= this.flushAt) await this.flush()
  }

  async flush(): Promise<void> {
    if (this.failure !== undefined) throw this.failure
    if (this.chunks.length === 0) return
    const pending = this.chunks
    this.chunks = []
    this.buffered = 0
    // All text stays one string (one write); bytes among it make the chunk a Buffer.
    const chunk = pending.every((c) => typeof c === 'string') ? pending.join('') : Buffer.concat(pending.map((c) => (typeof c === 'string' ? Buffer.from(c, 'utf8') : c)))
    const status = (this.stream as {isTTY?: boolean}).isTTY ? this.statusLine : undefined
    status?.clear()
    const flowing = this.stream.write(chunk)
    status?.redraw()
    if (flowing) return
    await new Promise<void>((resolve, reject) => {
      const drained = () => {
        this.waiting = undefined
        resolve()
      }
      this.waiting = (error) => {
        this.stream.off('drain', drained)
        this.waiting = undefined
        reject(error)
      }
      this.stream.once('drain', drained)
    })
  }
}
