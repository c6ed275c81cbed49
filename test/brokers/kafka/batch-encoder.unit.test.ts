/**
 * bq's Kafka record batch encoder (kafka/client/batch-encoder.ts), checked against kafkajs's own batch
 * decoder and kafkajs's own CRC-32C: what bq writes must read back field for field.
 */
import assert from 'node:assert/strict'
import {createRequire} from 'node:module'
import {describe, it} from 'node:test'

import {BATCH_OVERHEAD, NO_PRODUCER, crc32c, encodeRecordBatch, sizeOfVarint, writeVarint, type BatchRecord} from '../../../src/lib/brokers/kafka/client/batch-encoder.js'

const requireCjs = createRequire(import.meta.url)
type DecoderClass = new (buffer: Buffer) => {readVarInt(): number; readVarLong(): {toString(): string}}
const Decoder = requireCjs('kafkajs/src/protocol/decoder.js') as DecoderClass
const decodeBatch = requireCjs('kafkajs/src/protocol/recordBatch/v0/decoder.js') as (decoder: InstanceType<DecoderClass>) => Promise<DecodedBatch>
const kafkajsCrc32c = requireCjs('kafkajs/src/protocol/recordBatch/crc32C/index.js') as (buffer: Buffer) => number

interface DecodedRecord {
  attributes: number
  timestamp: string
  offset: string
  key: Buffer | null
  value: Buffer | null
  headers: Record<string, Buffer | null | Array<Buffer | null>>
}

interface DecodedBatch {
  firstOffset: string
  firstTimestamp: string
  maxTimestamp: string
  partitionLeaderEpoch: number
  inTransaction: boolean
  isControlBatch: boolean
  lastOffsetDelta: number
  producerId: string
  producerEpoch: number
  firstSequence: number
  records: DecodedRecord[]
}

async function roundTrip(records: BatchRecord[], producer = NO_PRODUCER): Promise<{bytes: Buffer; batch: DecodedBatch}> {
  const bytes = encodeRecordBatch(records, producer)
  return {bytes, batch: await decodeBatch(new Decoder(bytes))}
}

/** The stored CRC is the CRC-32C of everything after it, by kafkajs's implementation and bq's. */
function assertCrc(bytes: Buffer): void {
  assert.equal(bytes.readInt8(16), 2, 'magic v2')
  const stored = bytes.readUInt32BE(17)
  assert.equal(stored, kafkajsCrc32c(bytes.subarray(21)), 'kafkajs computes the same CRC')
  assert.equal(stored, crc32c(bytes, 21))
}

const text = (value: Buffer | null | undefined) => (value === null || value === undefined ? value : value.toString('utf8'))

describe('kafka record batch encoder', () => {
  it('writes every field of records with keys, null keys, headers (repeated, Buffer, null) and unicode, as kafkajs reads them', async () => {
    const base = 1_749_132_727_000
    const records: BatchRecord[] = [
      {key: null, value: Buffer.from('{"n":0}'), headers: {'bq-job': 'urn:babel:orders:created', 'bq-attempts': '3'}, timestamp: base + 5},
      {key: 'order-42', value: 'café ✓ 😀 naïve', headers: {tag: ['a', Buffer.from([0, 1, 2, 255])], empty: '', nothing: null, skipped: undefined}, timestamp: base},
      {key: Buffer.from('κλειδί'), value: Buffer.alloc(0), headers: {'ünï-cødé': 'välue ✓'}, timestamp: base + 2 ** 33},
      {value: null, timestamp: base + 1},
    ]
    const {bytes, batch} = await roundTrip(records, {producerId: 123_456_789_012n, producerEpoch: 7, baseSequence: 41})
    assertCrc(bytes)
    assert.equal(bytes.readInt32BE(8), bytes.length - 12, 'batch length counts the bytes after it')
    assert.equal(batch.firstOffset, '0')
    assert.equal(batch.partitionLeaderEpoch, -1)
    assert.equal(batch.inTransaction, false)
    assert.equal(batch.isControlBatch, false)
    assert.equal(batch.lastOffsetDelta, 3)
    assert.equal(batch.firstTimestamp, String(base), 'the base timestamp is the smallest')
    assert.equal(batch.maxTimestamp, String(base + 2 ** 33))
    assert.equal(batch.producerId, '123456789012')
    assert.equal(batch.producerEpoch, 7)
    assert.equal(batch.firstSequence, 41)
    assert.equal(bytes.readInt16BE(21), 0, 'attributes: no compression, CreateTime, not transactional')
    assert.equal(batch.records.length, 4)

    const [first, second, third, fourth] = batch.records
    assert.deepEqual(batch.records.map((record) => record.offset), ['0', '1', '2', '3'])
    assert.deepEqual(batch.records.map((record) => record.timestamp), [String(base + 5), String(base), String(base + 2 ** 33), String(base + 1)])
    assert.deepEqual(batch.records.map((record) => record.attributes), [0, 0, 0, 0])

    assert.equal(first.key, null)
    assert.equal(text(first.value), '{"n":0}')
    assert.deepEqual(Object.keys(first.headers), ['bq-job', 'bq-attempts'])
    assert.equal(text(first.headers['bq-job'] as Buffer), 'urn:babel:orders:created')
    assert.equal(text(first.headers['bq-attempts'] as Buffer), '3')

    assert.equal(text(second.key), 'order-42')
    assert.equal(text(second.value), 'café ✓ 😀 naïve')
    assert.deepEqual(Object.keys(second.headers), ['tag', 'empty', 'nothing'], 'an undefined header is left out')
    const tag = second.headers.tag as Buffer[]
    assert.equal(tag.length, 2, 'an array value is one header per item')
    assert.equal(text(tag[0]), 'a')
    assert.deepEqual([...tag[1]], [0, 1, 2, 255])
    assert.equal(text(second.headers.empty as Buffer), '')
    assert.equal(second.headers.nothing, null, 'a null header value stays null')

    assert.equal(text(third.key), 'κλειδί')
    assert.equal(third.value!.length, 0, 'an empty value is not a null one')
    assert.equal(text(third.headers['ünï-cødé'] as Buffer), 'välue ✓')

    assert.equal(fourth.key, null)
    assert.equal(fourth.value, null, 'a tombstone')
    assert.deepEqual(fourth.headers, {})
  })

  it('writes a plain batch (no idempotence) and long values, and one buffer of exactly the batch', async () => {
    const long = 'x'.repeat(70_000) + 'é'
    const {bytes, batch} = await roundTrip([{value: long, headers: {long: 'y'.repeat(200)}, timestamp: 0}])
    assertCrc(bytes)
    assert.equal(batch.producerId, '-1')
    assert.equal(batch.producerEpoch, -1)
    assert.equal(batch.firstSequence, -1)
    assert.equal(text(batch.records[0].value), long)
    assert.equal(text(batch.records[0].headers.long as Buffer), 'y'.repeat(200))
    // One record: attributes, timestamp and offset deltas, null key, the value (70,002 bytes), one header ("long": 200 bytes).
    const body = 1 + 1 + 1 + 1 + sizeOfVarint(70_002) + 70_002 + 1 + (1 + 4) + (sizeOfVarint(200) + 200)
    assert.equal(bytes.length, BATCH_OVERHEAD + sizeOfVarint(body) + body, 'exactly the batch, nothing after it')
    assert.equal(bytes.readInt32BE(8), bytes.length - 12, 'batch length counts the bytes after it')
  })

  it('keeps the order and content of a large batch', async () => {
    const records = Array.from({length: 3000}, (_, n) => ({value: `{"n":${n}}`, headers: {'bq-message-id': `id-${n}`}, timestamp: 1_700_000_000_000 + ((n * 7919) % 5000)}))
    const {bytes, batch} = await roundTrip(records, {producerId: 1n, producerEpoch: 0, baseSequence: 2 ** 31 - 10})
    assertCrc(bytes)
    assert.equal(batch.firstSequence, 2 ** 31 - 10)
    assert.equal(batch.records.length, 3000)
    batch.records.forEach((record, n) => {
      assert.equal(text(record.value), `{"n":${n}}`)
      assert.equal(text(record.headers['bq-message-id'] as Buffer), `id-${n}`)
      assert.equal(record.timestamp, String(records[n].timestamp))
    })
  })

  it('refuses an empty batch', () => {
    assert.throws(() => encodeRecordBatch([], NO_PRODUCER), /at least one record/)
  })

  it('encodes zigzag varints as Kafka (and kafkajs) read them, up to 2^53', () => {
    for (const value of [0, 1, -1, 63, -64, 64, 127, 128, 300, -300, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, 2 ** 35 + 3, -(2 ** 40), Number.MAX_SAFE_INTEGER >> 1, 1_749_132_727_000]) {
      const buf = Buffer.alloc(16)
      const end = writeVarint(buf, 0, value)
      assert.equal(end, sizeOfVarint(value), `size of ${value}`)
      assert.equal(new Decoder(buf.subarray(0, end)).readVarLong().toString(), String(value))
    }
    const small = Buffer.alloc(5)
    writeVarint(small, 0, -1)
    assert.equal(small[0], 1, '-1 (null) is a single byte 0x01')
  })

  it('computes CRC-32C (Castagnoli)', () => {
    assert.equal(crc32c(Buffer.from('123456789')), 0xe3069283, 'the standard check value')
    assert.equal(crc32c(Buffer.alloc(0)), 0)
    assert.equal(crc32c(Buffer.alloc(32)), 0x8a9136aa, 'RFC 3720 B.4: 32 zero bytes')
    assert.equal(crc32c(Buffer.alloc(32, 0xff)), 0x62a8ab43, 'RFC 3720 B.4: 32 bytes of 0xff')
    const random = Buffer.from(Array.from({length: 10_007}, (_, i) => (i * 2_654_435_761) >>> 24))
    for (const [start, end] of [[0, random.length], [3, 10_000], [5, 12], [1, 1]]) {
      assert.equal(crc32c(random, start, end), kafkajsCrc32c(random.subarray(start, end)), `bytes ${start}..${end}`)
    }
  })
})
