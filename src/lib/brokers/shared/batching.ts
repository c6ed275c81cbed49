/**
 * Splits items into groups of at most `maxEntries` items and `maxBytes` bytes, keeping order; an
 * item larger than `maxBytes` goes alone. Shared by every adapter whose broker calls have limits.
 */
export function splitBatches<T>(items: T[], size: (item: T) => number, maxEntries: number, maxBytes = Infinity): T[][] {
  const out: T[][] = []
  let current: T[] = []
  let bytes = 0
  for (const item of items) {
    const itemBytes = size(item)
    if (current.length > 0 && (current.length >= maxEntries || bytes + itemBytes > maxBytes)) {
      out.push(current)
      current = []
      bytes = 0
    }
    current.push(item)
    bytes += itemBytes
  }
  if (current.length > 0) out.push(current)
  return out
}
