import type {Writable} from 'node:stream'

/**
 * Buffered output for commands that print a lot (a line per message). It batches writes,
 * respects back-pressure, and treats a closed pipe (`bq ... | head`) as a normal end.
 */
export class OutputWriter {
  private buffer = ''
  private closed = false

  constructor(private readonly stream: Writable = process.stdout, private readonly flushAt = 64 * 1024) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      // The reader went away: stop writing quietly, as Unix tools do.
      if (error.code === 'EPIPE') {
        this.closed = true
        process.exit(process.exitCode ?? 0)
      }
      throw error
    })
  }

  write(text: string): void {
    if (this.closed) return
    this.buffer += text
  }

  line(text = ''): void {
    this.write(text + '\n')
  }

  /** Flushes when enough is buffered; waits when the stream asks us to. */
  async maybeFlush(): Promise<void> {
    if (this.buffer.length >= this.flushAt) await this.flush()
  }

  async flush(): Promise<void> {
    if (this.closed || this.buffer === '') return
    const chunk = this.buffer
    this.buffer = ''
    if (!this.stream.write(chunk)) await new Promise<void>((resolve) => this.stream.once('drain', () => resolve()))
  }
}
