/**
 * How many messages a run asks the broker for at a time: batches sized by bytes, and the largest
 * message a run moves at all.
 */
import type {BrokerMessage} from '../brokers/adapter.js'

/** The most messages one batch asks for. */
export const DEFAULT_BATCH = 500

/**
 * The byte budget of one batch: the engine asks `DrainSession.next()` (and browse, in a dry run)
 * for as many messages as fit, judged by the sizes it has seen. It holds about two batches at a
 * time (one moving while the next is decoded), each with its reset copies, so a run's memory is
 * bounded by a few times this, not by the batch count times the message size.
 */
export const BATCH_BYTES = 64 * 1024 * 1024

/**
 * The largest message a redrive (or replay) moves: 128 MiB (docs/limits.md), more than most
 * brokers accept by default and small enough to keep a run's memory bounded. A larger one is not read into the codec: it stays where it is and
 * is reported as failed with its size, and the run goes on.
 */
export const MAX_MOVE_MESSAGE_BYTES = 128 * 1024 * 1024

/**
 * Batch sizes by bytes: the first batch asks for `first` messages (one unless the caller fixed a
 * batch size), each next one for up to four times the previous count, never more than `cap` nor
 * than the byte budget allows for the largest message of the last batch (or the average so far,
 * if larger).
 */
export class BatchSizer {
  private size: number
  private seenBytes = 0
  private seenCount = 0

  constructor(
    private readonly cap: number,
    first = 1,
    private readonly budget = BATCH_BYTES,
  ) {
    this.size = first
  }

  /** How many messages to ask for next. */
  next(): number {
    return Math.max(1, Math.min(this.size, this.cap))
  }

  /** Records the sizes of the batch just taken. */
  saw(sizes: number[]): void {
    if (sizes.length === 0) return
    let largest = 0
    for (const size of sizes) {
      largest = Math.max(largest, size)
      this.seenBytes += size
    }
    this.seenCount += sizes.length
    const typical = Math.max(largest, this.seenBytes / this.seenCount, 1)
    this.size = Math.max(1, Math.min(this.cap, this.size * 4, Math.floor(this.budget / typical)))
  }
}

/** Why a message is too large to move, or undefined. */
export function tooLarge(message: BrokerMessage): string | undefined {
  if (message.body.length <= MAX_MOVE_MESSAGE_BYTES) return undefined
  const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`
  return `the message is ${mib(message.body.length)}, larger than bq's largest movable message (${mib(MAX_MOVE_MESSAGE_BYTES)}): left in place`
}
