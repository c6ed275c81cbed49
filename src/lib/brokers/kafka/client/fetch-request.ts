/**
 * bq's own Fetch request (v4) for reading one partition by offset, sent over a kafkajs broker
 * connection like the produce path (produce-request.ts), and a decoder of its answer that is
 * much cheaper than kafkajs's: offsets and timestamps become numbers straight from two 32-bit
 * halves (no `Long` objects, no decimal strings), keys, values and header values are views of
 * the response buffer (no copies), and the records kafkajs's consumer would drop (below the
 * requested offset, control records, records of aborted transactions) are dropped the same way
 * (its Batch class and aborted-transaction filter).
 *
 * Only uncompressed magic-v2 record batches are decoded here; for anything else the decoder
 * answers `undefined` and the caller reads the partition through kafkajs (wire.ts).
 */
import {BqError} from '../../../errors.js'
import {asEncoded, protocolError, sendRequest, type ProtocolRequest} from './produce-request.js'
import type {KafkaHeaders, KafkaRecord} from './wire.js'

const FETCH_API_KEY = 1
/** Kafka 4 accepts Fetch v4 and later; v4 is the oldest layout that carries isolation level and aborted transactions. */
const FETCH_VERSIONS = ['4']
const TWO_32 = 2 ** 32
/** Above this high half, an int64 is beyond a safe JavaScript integer. */
const SAFE_HIGH = 0x1f_ffff
const COMPRESSION_MASK = 0x07
const LOG_APPEND_TIME_FLAG = 0x08
const TRANSACTIONAL_FLAG = 0x10
const CONTROL_FLAG = 0x20
/** Batch header bytes before the records: offset(8) length(4) epoch(4) magic(1) crc(4) attributes(2) lastOffsetDelta(4) firstTimestamp(8) maxTimestamp(8) producerId(8) producerEpoch(2) baseSequence(4) count(4). */
const BATCH_HEADER = 61

export interface DecodedFetch {
  /** Visible records at or after the requested offset. */
  records: KafkaRecord[]
  /** Past the last whole batch in the answer; the requested offset when there was none. */
  next: number
}

interface FetchBroker {
  lookupRequest(apiKey: number, definition: {versions: string[]; protocol: (choice: {version: number}) => number}): number
}

/**
 * Fetches one partition from `offset` (READ_COMMITTED, no wait). Throws kafkajs's protocol error
 * for a partition error code (OFFSET_OUT_OF_RANGE, NOT_LEADER…, as kafkajs's own fetch does).
 * Undefined: the answer holds a batch this decoder does not read (compressed, or an old format).
 */
export async function fetchPartition(broker: unknown, topic: string, partition: number, offset: number, maxBytes: number, timeoutMs: number): Promise<DecodedFetch | undefined> {
  const target = broker as FetchBroker
  const version = target.lookupRequest(FETCH_API_KEY, {versions: FETCH_VERSIONS, protocol: ({version}) => version})
  if (version !== 4) return undefined
  const body = encodeFetchBody(topic, partition, offset, maxBytes)
  const request: ProtocolRequest = {
    request: {apiKey: FETCH_API_KEY, apiVersion: version, apiName: 'Fetch', expectResponse: () => true, encode: async () => asEncoded(body)},
    response: {decode: async (payload) => decodeFetchResponse(payload, topic, partition, offset), parse: async (data) => data},
    requestTimeout: timeoutMs,
  }
  const answer = (await sendRequest(broker)(request)) as {errorCode: number; result: DecodedFetch | undefined}
  if (answer.errorCode !== 0) throw protocolError(answer.errorCode)
  return answer.result
}

/** Fetch Request v4: replica_id max_wait min_bytes max_bytes isolation_level [topic [partition fetch_offset partition_max_bytes]]. */
export function encodeFetchBody(topic: string, partition: number, offset: number, maxBytes: number): Buffer {
  const topicLength = Buffer.byteLength(topic, 'utf8')
  const body = Buffer.allocUnsafe(4 + 4 + 4 + 4 + 1 + 4 + 2 + topicLength + 4 + 4 + 8 + 4)
  let at = body.writeInt32BE(-1, 0)
  at = body.writeInt32BE(0, at)
  at = body.writeInt32BE(1, at)
  at = body.writeInt32BE(maxBytes, at)
  at = body.writeInt8(1, at)
  at = body.writeInt32BE(1, at)
  at = body.writeInt16BE(topicLength, at)
  at += body.write(topic, at, 'utf8')
  at = body.writeInt32BE(1, at)
  at = body.writeInt32BE(partition, at)
  at = body.writeBigInt64BE(BigInt(offset), at)
  body.writeInt32BE(maxBytes, at)
  return body
}

/**
 * Fetch Response v4: throttle_time [topic [partition error_code high_watermark last_stable_offset
 * [producer_id first_offset] records]]. Only the asked partition is read.
 */
export function decodeFetchResponse(payload: Buffer, topic: string, partition: number, offset: number): {throttleTime: number; errorCode: number; result: DecodedFetch | undefined} {
  const reader = new ByteReader(payload)
  const throttleTime = reader.int32()
  const topics = reader.int32()
  for (let t = 0; t < topics; t++) {
    const name = reader.string()
    const partitions = reader.int32()
    for (let p = 0; p < partitions; p++) {
      const id = reader.int32()
      const errorCode = reader.int16()
      reader.skip(16)
      const abortedCount = reader.int32()
      const aborted: Array<{producerId: number; firstOffset: number}> = []
      for (let a = 0; a < abortedCount; a++) aborted.push({producerId: reader.int64(), firstOffset: reader.int64()})
      const size = reader.int32()
      const records = size < 0 ? undefined : payload.subarray(reader.at, reader.at + size)
      reader.skip(Math.max(0, size))
      if (name !== topic || id !== partition) continue
      if (errorCode !== 0) return {throttleTime, errorCode, result: {records: [], next: offset}}
      return {throttleTime, errorCode, result: records === undefined ? {records: [], next: offset} : decodeRecordSet(records, partition, offset, aborted)}
    }
  }
  return {throttleTime, errorCode: 0, result: {records: [], next: offset}}
}

/** The visible records of a record set; undefined when a batch is compressed or not magic v2. */
export function decodeRecordSet(set: Buffer, partition: number, fetchOffset: number, aborted: Array<{producerId: number; firstOffset: number}>): DecodedFetch | undefined {
  const records: KafkaRecord[] = []
  const reader = new ByteReader(set)
  let next = fetchOffset
  // kafkajs's aborted-transaction walk, kept as it is (one list entry taken per record at most).
  let remaining = 0
  const abortedProducers = new Set<number>()
  while (set.length - reader.at >= BATCH_HEADER) {
    const start = reader.at
    const baseOffset = reader.offset()
    const length = reader.int32()
    const end = start + 12 + length
    // A batch cut off by max_bytes: the next fetch starts at it.
    if (end > set.length) break
    reader.skip(4)
    if (reader.int8() !== 2) return undefined
    reader.skip(4)
    const attributes = reader.int16()
    if ((attributes & COMPRESSION_MASK) !== 0) return undefined
    const lastOffsetDelta = reader.int32()
    const firstTimestamp = reader.int64()
    const maxTimestamp = reader.int64()
    const producerId = reader.int64()
    reader.skip(6)
    const count = reader.int32()
    const inTransaction = (attributes & TRANSACTIONAL_FLAG) !== 0
    const isControl = (attributes & CONTROL_FLAG) !== 0
    const logAppendTime = (attributes & LOG_APPEND_TIME_FLAG) !== 0
    for (let i = 0; i < count; i++) {
      reader.varint()
      reader.skip(1)
      const timestampDelta = reader.varlong()
      const offsetDelta = reader.varint()
      const recordOffset = baseOffset + offsetDelta
      const key = reader.bytes()
      const value = reader.bytes()
      const headerCount = reader.varint()
      let headers: KafkaHeaders = {}
      for (let h = 0; h < headerCount; h++) headers = withHeader(headers, reader.text(), reader.bytes())
      if (recordOffset < fetchOffset) continue
      if (remaining < aborted.length && recordOffset >= aborted[remaining].firstOffset) abortedProducers.add(aborted[remaining++].producerId)
      // Like kafkajs, any record keyed 0x00000000 ends its producer's aborted run.
      if (key !== null && key.length === 4 && key.readUInt32BE(0) === 0) {
        abortedProducers.delete(producerId)
      } else if (inTransaction && abortedProducers.has(producerId)) {
        continue
      }
      if (isControl) continue
      const timestamp = logAppendTime ? maxTimestamp : firstTimestamp + timestampDelta
      // A tombstone (null value) has an empty body: bq shows it as a poison message.
      records.push({partition, offset: safe(recordOffset), key, value: value ?? Buffer.alloc(0), headers, timestamp, fetched: set})
    }
    reader.at = end
    next = Math.max(next, baseOffset + lastOffsetDelta + 1)
  }
  return {records, next: safe(next)}
}

/** A repeated header name holds every value, in order (as kafkajs gives them). */
function withHeader(headers: KafkaHeaders, name: string, value: Buffer | null): KafkaHeaders {
  const known = headers[name]
  const given = value as Buffer
  headers[name] = known === undefined ? given : Array.isArray(known) ? [...known, given] : [known, given]
  return headers
}

function safe(offset: number): number {
  if (!Number.isSafeInteger(offset)) throw new BqError(`Kafka offset ${offset} is beyond what bq can handle (2^53)`)
  return offset
}

/** Big-endian fields and Kafka's zig-zag varints over one buffer, numbers only. */
class ByteReader {
  at = 0

  constructor(private readonly buffer: Buffer) {}

  skip(count: number): void {
    this.at += count
  }

  int8(): number {
    return this.buffer.readInt8(this.at++)
  }

  int16(): number {
    const value = this.buffer.readInt16BE(this.at)
    this.at += 2
    return value
  }

  int32(): number {
    const value = this.buffer.readInt32BE(this.at)
    this.at += 4
    return value
  }

  /** An int64 as a number (exact within ±2^53, which offsets, timestamps and producer ids stay in). */
  int64(): number {
    const high = this.buffer.readInt32BE(this.at)
    const low = this.buffer.readUInt32BE(this.at + 4)
    this.at += 8
    return high * TWO_32 + low
  }

  /** An offset, refused beyond 2^53 rather than rounded. */
  offset(): number {
    const high = this.buffer.readInt32BE(this.at)
    if (high > SAFE_HIGH) throw new BqError(`Kafka offset ${this.buffer.readBigInt64BE(this.at)} is beyond what bq can handle (2^53)`)
    return this.int64()
  }

  string(): string {
    const length = this.int16()
    const value = this.buffer.toString('utf8', this.at, this.at + length)
    this.at += length
    return value
  }

  varint(): number {
    let result = 0
    let shift = 0
    let byte: number
    do {
      byte = this.buffer[this.at++]
      result |= (byte & 0x7f) << shift
      shift += 7
    } while (byte & 0x80 && shift < 35)
    return (result >>> 1) ^ -(result & 1)
  }

  /** A zig-zag varlong as a number (timestamp deltas are small). */
  varlong(): number {
    let result = 0
    let scale = 1
    let byte: number
    do {
      byte = this.buffer[this.at++]
      result += (byte & 0x7f) * scale
      scale *= 128
    } while (byte & 0x80 && scale < 2 ** 70)
    return result % 2 === 0 ? result / 2 : -(result + 1) / 2
  }

  /** Varint-length bytes as a view of the buffer; null for length -1. */
  bytes(): Buffer | null {
    const length = this.varint()
    if (length < 0) return null
    const value = this.buffer.subarray(this.at, this.at + length)
    this.at += length
    return value
  }

  text(): string {
    const length = this.varint()
    const value = length < 0 ? '' : this.buffer.toString('utf8', this.at, this.at + length)
    this.at += Math.max(0, length)
    return value
  }
}
