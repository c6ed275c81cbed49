/** Batching and bounded fan-out for SQS's 10-entry batch calls. */
import {splitBatches} from '../shared/batching.js'

/** SQS batch calls (send, delete, change visibility) take at most 10 entries. */
export const SQS_BATCH_ENTRIES = 10

/** Splits items into groups of at most `maxEntries` items and `maxBytes` bytes (an item larger than maxBytes goes alone). */
export function inBatches<T>(items: T[], size: (item: T) => number, maxEntries = SQS_BATCH_ENTRIES, maxBytes = Infinity): T[][] {
  return splitBatches(items, size, maxEntries, maxBytes)
}

/**
 * Runs `work` for every item with at most `limit` calls in flight, and settles only when every
 * started call has settled: a failure never leaves requests running behind the caller's back.
 * Throws the first failure; later items are not started once one failed.
 */
export async function forEachLimited<T>(items: T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  let failure: {error: unknown} | undefined
  const lane = async () => {
    while (failure === undefined && next < items.length) {
      const item = items[next++]
      try {
        await work(item)
      } catch (error) {
        failure ??= {error}
      }
    }
  }
  await Promise.all(Array.from({length: Math.min(limit, items.length)}, lane))
  if (failure !== undefined) throw failure.error
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
