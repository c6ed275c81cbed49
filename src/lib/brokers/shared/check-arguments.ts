/** Argument checks every adapter shares, so a bad call fails the same way on every broker. */
import {UsageError} from '../../errors.js'
import type {BrowseOptions} from '../adapter.js'

export function checkQueue(queue: string, displayUrl: string): void {
  if (typeof queue !== 'string' || queue === '') throw new UsageError(`a queue name is required (broker ${displayUrl})`)
}

export function checkBrowse(options: BrowseOptions): {limit: number; offset: number} {
  const limit = options.limit
  const offset = options.offset ?? 0
  if (!Number.isSafeInteger(limit) || limit < 0) throw new UsageError(`browse limit must be a non-negative integer, got ${limit}`)
  if (!Number.isSafeInteger(offset) || offset < 0) throw new UsageError(`browse offset must be a non-negative integer, got ${offset}`)
  return {limit, offset}
}

export function checkBatch(max: number): number {
  if (!Number.isSafeInteger(max) || max < 0) throw new UsageError(`next() needs a non-negative integer, got ${max}`)
  return max
}
