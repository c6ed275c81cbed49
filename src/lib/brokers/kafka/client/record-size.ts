/**
 * How many bytes a record takes in a record batch: the producer keeps its batches under the
 * broker's limit with it. It lives with the batch encoder whose layout it counts.
 */
import type {KafkaMessage} from './wire.js'

/** Most a record batch spends on one record besides its key, value and headers (batch-encoder.ts: length, attributes, deltas, length prefixes). */
const RECORD_OVERHEAD = 26
/** Most it spends on one header besides its name and value (two length prefixes). */
const HEADER_OVERHEAD = 5

/**
 * Bytes a record takes in a record batch, for keeping batches under the broker's limit: exact up
 * to the varint widths, which it takes at their widest; strings count one byte per character, so
 * non-ASCII text can take more, and a batch the broker still finds too large is split.
 */
export function recordSize(message: KafkaMessage): number {
  let size = RECORD_OVERHEAD + lengthOf(message.value) + lengthOf(message.key)
  const headers = message.headers
  if (headers !== undefined) {
    for (const name in headers) {
      const value = headers[name]
      if (Array.isArray(value)) for (const item of value) size += name.length + lengthOf(item) + HEADER_OVERHEAD
      else size += name.length + lengthOf(value) + HEADER_OVERHEAD
    }
  }
  return size
}

function lengthOf(value: Buffer | string | null | undefined): number {
  return value === null || value === undefined ? 0 : value.length
}
