/**
 * bq's Fetch answer decoder (kafka/client/fetch-request.ts) against kafkajs's own decoding and
 * consumer filter (what bq read through before): the same records, field for field, for plain
 * batches, a fetch that starts inside a batch, a batch cut off by max_bytes, and transactions
 * (aborted, committed, control records). Batches come from bq's encoder (batch-encoder.ts).
 */
import assert from 'node:assert/strict'
import {createRequire} from 'node:module'
import {describe, it} from 'node:test'

import {NO_PRODUCER, encodeRecordBatch, type BatchRecord} from '../../../src/lib/brokers/kafka/client/batch-encoder.js'
import {decodeFetchResponse, decodeRecordSet} from '../../../src/lib/brokers/kafka/client/fetch-request.js'
import type {KafkaRecord} from '../../../src/lib/brokers/kafka/client/index.js'

const requireCjs = createRequire(import.meta.url)
type DecoderClass = new (buffer: Buffer) => unknown
const Decoder = requireCjs('kafkajs/src/protocol/decoder.js') as DecoderClass
const decodeMessages = requireCjs('kafkajs/src/protocol/requests/fetch/v4/decodeMessages.js') as (decoder: unknown) => Promise<RawRecord[]>
const Batch = requireCjs('kafkajs/src/consumer/batch.js') as new (topic: string, offset: string, data: object) => {messages: RawRecord[]}

interface RawRecord {
  offset: string
  key: Buffer | null
  value: Buffer | null
  headers: KafkaRecord['headers']
  timestamp: string
}

const TRANSACTIONAL = 0x10
const CONTROL = 0x20

/** One batch at `baseOffset` with these attributes (bq's encoder writes base offset 0, attributes 0). */
function batch(baseOffset: number, records: BatchRecord[], options: {attributes?: number; producerId?: bigint} = {}): Buffer {
  const encoded = encodeRecordBatch(records, options.producerId === undefined ? NO_PRODUCER : {producerId: options.producerId, producerEpoch: 0, baseSequence: 0})
  encoded.writeBigInt64BE(BigInt(baseOffset), 0)
  encoded.writeInt16BE(options.attributes ?? 0, 21)
  return encoded
}

/** The decoded records without the fetch answer they are views of (kafkajs gives no such field). */
const fields = (decoded: {records: KafkaRecord[]} | undefined) => decoded?.records.map(({fetched, ...rest}) => (assert.ok(fetched instanceof Buffer), rest))

const plain = (i: number, extra: Partial<BatchRecord> = {}): BatchRecord => ({key: `k${i}`, value: `{"n":${i}}`, timestamp: 1_700_000_000_000 + i, ...extra})

/** What bq read before: kafkajs's decoder and consumer filter, then the old record mapping. */
async function viaKafkajs(set: Buffer, partition: number, offset: number, aborted: Array<{producerId: string; firstOffset: string}> = []): Promise<KafkaRecord[]> {
  const sized = Buffer.concat([Buffer.from([0, 0, 0, 0]), set])
  sized.writeInt32BE(set.length, 0)
  const messages = await decodeMessages(new Decoder(sized))
  const visible = new Batch('t', String(offset), {partition, highWatermark: '0', abortedTransactions: aborted, messages}).messages
  return visible.map((raw) => ({partition, offset: Number(raw.offset), key: raw.key ?? null, value: raw.value ?? Buffer.alloc(0), headers: raw.headers ?? {}, timestamp: Number(raw.timestamp)}))
}

describe('kafka fetch decoder', () => {
  it('reads plain batches like kafkajs: keys, null keys and values, repeated headers, timestamps', async () => {
    const set = Buffer.concat([
      batch(100, [plain(0, {headers: {a: 'x', b: ['1', '2', '3']}}), plain(1, {key: null}), plain(2, {value: null})]),
      batch(103, [plain(3, {headers: {'bq-type': 'urn:x', empty: ''}}), plain(4, {timestamp: 1_600_000_000_000})]),
    ])
    const decoded = decodeRecordSet(set, 2, 100, [])
    assert.deepEqual(fields(decoded), await viaKafkajs(set, 2, 100))
    assert.equal(decoded?.records.length, 5)
    assert.equal(decoded?.next, 105)
  })

  it('drops records below the requested offset and a batch cut off at the end', async () => {
    const whole = Buffer.concat([batch(10, [plain(0), plain(1), plain(2)]), batch(13, [plain(3)])])
    const cut = Buffer.concat([whole, batch(14, [plain(4), plain(5)]).subarray(0, 40)])
    const decoded = decodeRecordSet(cut, 0, 11, [])
    assert.deepEqual(fields(decoded), await viaKafkajs(cut, 0, 11))
    assert.deepEqual(decoded?.records.map((record) => record.offset), [11, 12, 13])
    assert.equal(decoded?.next, 14)
  })

  it('hides aborted transactions and control records, keeps committed ones, like kafkajs', async () => {
    const abortMarker: BatchRecord = {key: Buffer.from([0, 0, 0, 0]), value: Buffer.from([0, 0, 0, 0, 0, 0]), timestamp: 1}
    const commitMarker: BatchRecord = {key: Buffer.from([0, 0, 0, 1]), value: Buffer.from([0, 0, 0, 0, 0, 0]), timestamp: 1}
    const set = Buffer.concat([
      batch(0, [plain(0)]),
      batch(1, [plain(1), plain(2)], {attributes: TRANSACTIONAL, producerId: 7n}),
      batch(3, [abortMarker], {attributes: TRANSACTIONAL | CONTROL, producerId: 7n}),
      batch(4, [plain(4), plain(5)], {attributes: TRANSACTIONAL, producerId: 8n}),
      batch(6, [commitMarker], {attributes: TRANSACTIONAL | CONTROL, producerId: 8n}),
      batch(7, [plain(7)], {attributes: TRANSACTIONAL, producerId: 7n}),
    ])
    const aborted = [{producerId: 7, firstOffset: 1}]
    const decoded = decodeRecordSet(set, 1, 0, aborted)
    const before = await viaKafkajs(set, 1, 0, aborted.map((entry) => ({producerId: String(entry.producerId), firstOffset: String(entry.firstOffset)})))
    assert.deepEqual(fields(decoded), before)
    assert.deepEqual(decoded?.records.map((record) => record.offset), [0, 4, 5, 7])
    assert.equal(decoded?.next, 8)
  })

  it('gives up on a compressed batch (kafkajs reads those)', () => {
    assert.equal(decodeRecordSet(batch(0, [plain(0)], {attributes: 1}), 0, 0, []), undefined)
  })

  it('finds the asked partition in a Fetch v4 answer and passes its error code on', () => {
    const records = batch(5, [plain(5)])
    const topic = Buffer.from('t')
    const answer = Buffer.alloc(4 + 4 + 2 + topic.length + 4 + (4 + 2 + 8 + 8 + 4 + 4) * 2 + records.length)
    let at = answer.writeInt32BE(0, 0)
    at = answer.writeInt32BE(1, at)
    at = answer.writeInt16BE(topic.length, at)
    at += topic.copy(answer, at)
    at = answer.writeInt32BE(2, at)
    for (const [partition, errorCode, set] of [[0, 1, Buffer.alloc(0)], [3, 0, records]] as const) {
      at = answer.writeInt32BE(partition, at)
      at = answer.writeInt16BE(errorCode, at)
      at = answer.writeBigInt64BE(6n, at)
      at = answer.writeBigInt64BE(6n, at)
      at = answer.writeInt32BE(0, at)
      at = answer.writeInt32BE(set.length, at)
      at += set.copy(answer, at)
    }
    const three = decodeFetchResponse(answer, 't', 3, 5)
    assert.equal(three.errorCode, 0)
    assert.deepEqual(three.result?.records.map((record) => [record.partition, record.offset, record.value.toString()]), [[3, 5, '{"n":5}']])
    assert.equal(decodeFetchResponse(answer, 't', 0, 0).errorCode, 1)
  })
})
