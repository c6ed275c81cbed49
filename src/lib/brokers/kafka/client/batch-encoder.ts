/**
 * Records → one Kafka record batch (magic v2, uncompressed), the unit a Produce request carries
 * per partition. Pure: no I/O, no kafkajs.
 *
 * Why bq encodes its own: kafkajs builds every record and every header in its own zero-filled,
 * growable buffer and then copies them together; with six `bq-` headers per record that was most
 * of the cost of publishing (garbage collection and buffer construction). Here every length is
 * measured once, one buffer of the exact size is taken, and each byte is written once.
 *
 * Layout (Kafka's DefaultRecordBatch): baseOffset int64, batchLength int32, partitionLeaderEpoch
 * int32, magic int8, crc uint32 (CRC-32C of everything after it), attributes int16,
 * lastOffsetDelta int32, baseTimestamp int64, maxTimestamp int64, producerId int64, producerEpoch
 * int16, baseSequence int32, record count int32, then the records. A record: length varint,
 * attributes int8, timestampDelta varlong, offsetDelta varint, key, value, header count varint,
 * headers (key string, value bytes). Varints are zigzag-encoded; a null key/value has length -1.
 */

/** A header value; null is a header with a null value, undefined is no header. */
export type HeaderValue = Buffer | string | null | undefined
/** Record headers the kafkajs way: a repeated key is an array of values, sent as that many headers. */
export type RecordHeaders = Record<string, HeaderValue | Array<Buffer | string>>

export interface BatchRecord {
  key?: Buffer | string | null
  value: Buffer | string | null
  headers?: RecordHeaders
  /** Unix ms (CreateTime); an integer. */
  timestamp: number
}

/** Who produces the batch: the idempotence fields of its header. */
export interface BatchProducer {
  producerId: bigint
  producerEpoch: number
  /** Sequence number of the batch's first record in its partition. */
  baseSequence: number
}

/** A batch outside any idempotent session (what a plain producer sends). */
export const NO_PRODUCER: BatchProducer = {producerId: -1n, producerEpoch: -1, baseSequence: -1}

const MAGIC = 2
/** The broker stamps the leader epoch itself; producers send -1 ("none"). */
const NO_LEADER_EPOCH = -1
/** Bytes before the first record. */
export const BATCH_OVERHEAD = 61
/** The CRC covers the batch from its attributes field to the end. */
const CRC_OFFSET = 17
const CRC_START = 21

/** Encodes a non-empty list of records as one batch; the returned buffer is exactly its size. */
export function encodeRecordBatch(records: readonly BatchRecord[], producer: BatchProducer): Buffer {
  const count = records.length
  if (count === 0) throw new Error('a record batch needs at least one record')
  let baseTimestamp = records[0].timestamp
  let maxTimestamp = baseTimestamp
  for (let i = 1; i < count; i++) {
    const timestamp = records[i].timestamp
    if (timestamp < baseTimestamp) baseTimestamp = timestamp
    if (timestamp > maxTimestamp) maxTimestamp = timestamp
  }

  // Pass 1: every length, in the order pass 2 writes them (strings are measured once).
  const lengths = new LengthList(count * 16)
  let total = BATCH_OVERHEAD
  for (let i = 0; i < count; i++) {
    const record = records[i]
    const lengthSlot = lengths.reserve()
    let body = 1 + sizeOfVarlong(record.timestamp - baseTimestamp) + sizeOfVarint(i)
    body += sizeOfField(record.key, lengths)
    body += sizeOfField(record.value, lengths)
    const countSlot = lengths.reserve()
    let headerCount = 0
    let headerBytes = 0
    const headers = record.headers
    if (headers !== undefined) {
      for (const name in headers) {
        const value = headers[name]
        if (value === undefined) continue
        if (Array.isArray(value)) {
          for (const item of value) {
            headerBytes += sizeOfField(name, lengths) + sizeOfField(item, lengths)
            headerCount++
          }
        } else {
          headerBytes += sizeOfField(name, lengths) + sizeOfField(value, lengths)
          headerCount++
        }
      }
    }
    body += sizeOfVarint(headerCount) + headerBytes
    lengths.set(countSlot, headerCount)
    lengths.set(lengthSlot, body)
    total += sizeOfVarint(body) + body
  }

  // Pass 2: write.
  const buf = Buffer.allocUnsafe(total)
  buf.writeBigInt64BE(0n, 0)
  buf.writeInt32BE(total - 12, 8)
  buf.writeInt32BE(NO_LEADER_EPOCH, 12)
  buf.writeInt8(MAGIC, 16)
  buf.writeInt16BE(0, 21)
  buf.writeInt32BE(count - 1, 23)
  buf.writeBigInt64BE(BigInt(baseTimestamp), 27)
  buf.writeBigInt64BE(BigInt(maxTimestamp), 35)
  buf.writeBigInt64BE(producer.producerId, 43)
  buf.writeInt16BE(producer.producerEpoch, 51)
  buf.writeInt32BE(producer.baseSequence, 53)
  buf.writeInt32BE(count, 57)
  let offset = BATCH_OVERHEAD
  let next = 0
  for (let i = 0; i < count; i++) {
    const record = records[i]
    offset = writeVarint(buf, offset, lengths.get(next++))
    buf[offset++] = 0
    offset = writeVarint(buf, offset, record.timestamp - baseTimestamp)
    offset = writeVarint(buf, offset, i)
    offset = writeField(buf, offset, record.key, lengths.get(next++))
    offset = writeField(buf, offset, record.value, lengths.get(next++))
    offset = writeVarint(buf, offset, lengths.get(next++))
    const headers = record.headers
    if (headers === undefined) continue
    for (const name in headers) {
      const value = headers[name]
      if (value === undefined) continue
      if (Array.isArray(value)) {
        for (const item of value) {
          offset = writeField(buf, offset, name, lengths.get(next++))
          offset = writeField(buf, offset, item, lengths.get(next++))
        }
      } else {
        offset = writeField(buf, offset, name, lengths.get(next++))
        offset = writeField(buf, offset, value, lengths.get(next++))
      }
    }
  }
  // A mismatch would send a corrupt batch: fail here instead.
  if (offset !== total) throw new Error(`record batch encoding wrote ${offset} of ${total} bytes`)
  buf.writeUInt32BE(crc32c(buf, CRC_START, total), CRC_OFFSET)
  return buf
}

// ── lengths measured in pass 1 ─────────────────────────────────────────────────────────────────

/** A growable list of int lengths (one typed array instead of an object per record). */
class LengthList {
  private items: Int32Array
  private size = 0

  constructor(capacity: number) {
    this.items = new Int32Array(Math.max(16, capacity))
  }

  /** Appends a slot and returns its index. */
  reserve(): number {
    if (this.size === this.items.length) {
      const grown = new Int32Array(this.items.length * 2)
      grown.set(this.items)
      this.items = grown
    }
    return this.size++
  }

  set(index: number, value: number): void {
    this.items[index] = value
  }

  get(index: number): number {
    return this.items[index]
  }
}

/** Bytes of a length-prefixed field (its byte length is recorded; -1 for null). */
function sizeOfField(value: Buffer | string | null | undefined, lengths: LengthList): number {
  if (value === null || value === undefined) {
    lengths.set(lengths.reserve(), -1)
    return 1
  }
  const length = typeof value === 'string' ? utf8Length(value) : value.length
  lengths.set(lengths.reserve(), length)
  return sizeOfVarint(length) + length
}

/** UTF-8 byte length; short strings (header names and values) are measured here, cheaper than a native call. */
function utf8Length(text: string): number {
  const chars = text.length
  if (chars > 64) return Buffer.byteLength(text, 'utf8')
  let bytes = chars
  for (let i = 0; i < chars; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x80) continue
    if (code < 0x800) bytes += 1
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < chars && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      // A surrogate pair: two UTF-16 units, four bytes.
      bytes += 2
      i++
    } else {
      // Three bytes (a lone surrogate too: it is written as U+FFFD).
      bytes += 2
    }
  }
  return bytes
}

function writeField(buf: Buffer, offset: number, value: Buffer | string | null | undefined, length: number): number {
  offset = writeVarint(buf, offset, length)
  if (length <= 0) return offset
  if (typeof value === 'string') {
    if (length === value.length && length <= 64) {
      // Pure ASCII (UTF-8 length equals the UTF-16 length only then): a loop beats a native call on short strings.
      for (let i = 0; i < length; i++) buf[offset + i] = value.charCodeAt(i)
    } else {
      buf.write(value, offset, length, 'utf8')
    }
  } else {
    // Uint8Array#set: Buffer#copy's argument handling costs more than the copy for short values.
    buf.set(value!, offset)
  }
  return offset + length
}

// ── zigzag varints ──────────────────────────────────────────────────────────────────────────────

/** Zigzag in number arithmetic: exact for every safe integer (timestamp deltas exceed 32 bits). */
function zigzag(value: number): number {
  return value >= 0 ? value * 2 : -value * 2 - 1
}

function sizeOfUnsigned(value: number): number {
  if (value < 0x80) return 1
  if (value < 0x4000) return 2
  if (value < 0x200000) return 3
  if (value < 0x10000000) return 4
  let size = 5
  for (let rest = Math.floor(value / 0x800000000); rest > 0; rest = Math.floor(rest / 0x80)) size++
  return size
}

export function sizeOfVarint(value: number): number {
  return sizeOfUnsigned(zigzag(value))
}

/** Kafka's varlong is the same encoding with 64-bit range; safe integers cover every real timestamp. */
export const sizeOfVarlong = sizeOfVarint

export function writeVarint(buf: Buffer, offset: number, value: number): number {
  let rest = zigzag(value)
  while (rest > 0x7fffffff) {
    buf[offset++] = (rest % 0x80) | 0x80
    rest = Math.floor(rest / 0x80)
  }
  while (rest >= 0x80) {
    buf[offset++] = (rest & 0x7f) | 0x80
    rest >>>= 7
  }
  buf[offset++] = rest
  return offset
}

// ── CRC-32C (Castagnoli), slicing by 8 ─────────────────────────────────────────────────────────

/** The reflected Castagnoli polynomial. */
const CASTAGNOLI = 0x82f63b78

/**
 * Table k (entries 256k…256k+255) holds the CRC of byte b followed by k zero bytes, so eight
 * bytes fold in one step. One flat array: faster in V8 than eight separate ones.
 */
const TABLE: Int32Array = (() => {
  const table = new Int32Array(8 * 256)
  for (let byte = 0; byte < 256; byte++) {
    let crc = byte
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ CASTAGNOLI : crc >>> 1
    table[byte] = crc
  }
  for (let k = 1; k < 8; k++) {
    for (let byte = 0; byte < 256; byte++) {
      const previous = table[(k - 1) * 256 + byte]
      table[k * 256 + byte] = (previous >>> 8) ^ table[previous & 0xff]
    }
  }
  return table
})()

/** CRC-32C of buf[start, end), as an unsigned 32-bit number. */
export function crc32c(buf: Uint8Array, start = 0, end = buf.length): number {
  const t = TABLE
  let crc = -1
  let i = start
  for (; i + 8 <= end; i += 8) {
    const low = crc ^ (buf[i] | (buf[i + 1] << 8) | (buf[i + 2] << 16) | (buf[i + 3] << 24))
    crc =
      t[1792 + (low & 0xff)] ^
      t[1536 + ((low >>> 8) & 0xff)] ^
      t[1280 + ((low >>> 16) & 0xff)] ^
      t[1024 + (low >>> 24)] ^
      t[768 + buf[i + 4]] ^
      t[512 + buf[i + 5]] ^
      t[256 + buf[i + 6]] ^
      t[buf[i + 7]]
  }
  for (; i < end; i++) crc = t[(crc ^ buf[i]) & 0xff] ^ (crc >>> 8)
  return (crc ^ -1) >>> 0
}
