/**
 * bq's own Kafka produce path against a real broker: idempotence (a resent batch is written once,
 * a gap in the sequence is refused, a lost answer is resent safely), several partitions (every
 * record exactly once, in order per partition, keyed records where kafkajs would put them), and a
 * batch too large for the topic (split and sent in order; a single record too large fails loudly).
 */
import assert from 'node:assert/strict'
import {after, describe, it, type TestContext} from 'node:test'

import kafkajs, {type Message} from 'kafkajs'

import {encodeRecordBatch, type BatchRecord} from '../../../src/lib/brokers/kafka/client/batch-encoder.js'
import {IdempotentProducer} from '../../../src/lib/brokers/kafka/client/produce.js'
import {initProducerId, produce} from '../../../src/lib/brokers/kafka/client/produce-request.js'
import {KafkaPublisher} from '../../../src/lib/brokers/kafka/client/producer.js'
import {parseKafkaUrl} from '../../../src/lib/brokers/kafka/url.js'
import {KafkaWire, createKafkaClient, type KafkaRecord} from '../../../src/lib/brokers/kafka/client/wire.js'
import {BqError} from '../../../src/lib/errors.js'
import {requireBroker, uniqueQueue} from '../../support/brokers.js'
import {deleteTestTopics, kafkaHost, kafkaPort, kafkaUrl, withAdmin} from './support.js'

const available = (t: TestContext) => requireBroker(t, 'Kafka', kafkaHost, kafkaPort)
const used: string[] = []
after(async () => {
  if (used.length > 0) await deleteTestTopics(used).catch(() => undefined)
})

/** A fresh topic with these partitions (and topic configs). */
async function createTopic(label: string, partitions = 1, configEntries: Array<{name: string; value: string}> = []): Promise<string> {
  const topic = uniqueQueue(`kafka-produce-${label}`)
  used.push(topic)
  await withAdmin((admin) => admin.createTopics({topics: [{topic, numPartitions: partitions, replicationFactor: 1, configEntries}], waitForLeaders: true}))
  return topic
}

interface Session {
  wire: KafkaWire
  publisher: KafkaPublisher
}

async function withSession(work: (session: Session) => Promise<void>): Promise<void> {
  const target = parseKafkaUrl(kafkaUrl, kafkaUrl)
  const kafka = createKafkaClient(target)
  const wire = await KafkaWire.connect(kafka, kafkaUrl, target.secrets)
  const publisher = new KafkaPublisher(kafka, wire, target, kafkaUrl)
  try {
    await work({wire, publisher})
  } finally {
    await publisher.close()
    await wire.close()
  }
}

/** Every record of every partition, read by offset. */
async function readAll(wire: KafkaWire, topic: string): Promise<Map<number, KafkaRecord[]>> {
  wire.forget(topic)
  const layout = (await wire.layout(topic))!
  const marks = await wire.watermarks(topic, layout)
  const all = new Map<number, KafkaRecord[]>()
  for (const partition of layout) {
    const records: KafkaRecord[] = []
    let offset = marks.get(partition.partition)!.low
    while (offset < marks.get(partition.partition)!.high) {
      const fetched = await wire.fetch(topic, partition, offset, 1 << 20)
      assert.ok(fetched.next > offset, 'the fetch moved on')
      records.push(...fetched.records)
      offset = fetched.next
    }
    all.set(partition.partition, records)
  }
  return all
}

const values = (records: KafkaRecord[] | undefined) => (records ?? []).map((record) => record.value.toString())
const batchOf = (from: number, to: number): BatchRecord[] => Array.from({length: to - from}, (_, i) => ({value: `v${from + i}`, timestamp: Date.now()}))

describe('kafka produce path', () => {
  it('writes a batch sent twice with the same sequence once, and refuses a gap in the sequence', async (t) => {
    if (!(await available(t))) return
    await withSession(async ({wire}) => {
      const topic = await createTopic('resend')
      const [{leader}] = (await wire.layout(topic))!
      const broker = await wire.broker(leader)
      const session = await initProducerId(broker)
      const first = encodeRecordBatch(batchOf(0, 5), {...session, baseSequence: 0})
      const send = async (batch: Buffer) => (await produce(broker, topic, [{partition: 0, batch}], -1, 30_000))[0]

      const written = await send(first)
      assert.equal(written.errorCode, 0)
      assert.equal(written.baseOffset, '0')
      // The same bytes again (as after a lost answer): acknowledged, not written again.
      const again = await send(first)
      assert.ok(again.errorCode === 0 || again.errorCode === 46, `a duplicate is a success (got error code ${again.errorCode})`)
      if (again.errorCode === 0) assert.equal(again.baseOffset, '0', 'the broker answers with where the first copy is')
      const next = await send(encodeRecordBatch(batchOf(5, 10), {...session, baseSequence: 5}))
      assert.equal(next.errorCode, 0)
      assert.equal(next.baseOffset, '5')
      const gap = await send(encodeRecordBatch(batchOf(10, 12), {...session, baseSequence: 20}))
      assert.equal(gap.errorCode, 45, 'OUT_OF_ORDER_SEQUENCE_NUMBER')

      assert.deepEqual(values((await readAll(wire, topic)).get(0)), batchOf(0, 10).map((record) => record.value))
    })
  })

  it('resends a batch whose answer was lost, and the broker keeps one copy', async (t) => {
    if (!(await available(t))) return
    await withSession(async ({wire}) => {
      const topic = await createTopic('lost-answer')
      // A wire whose brokers lose the answer to the first Produce request, after the broker wrote it.
      let produced = 0
      const flaky = Object.create(wire) as KafkaWire
      flaky.broker = async (nodeId: number) => {
        const real = (await wire.broker(nodeId)) as object
        return new Proxy(real, {
          get(target, property) {
            const value = Reflect.get(target, property, target) as unknown
            if (typeof value !== 'function') return value
            if (typeof property === 'symbol' && property.description === 'private:Broker:sendRequest') {
              return async (request: {request: {apiName: string}}) => {
                const answer = await (value as (r: unknown) => Promise<unknown>).call(target, request)
                if (request.request.apiName === 'Produce' && produced++ === 0) throw Object.assign(new Error('Connection closed'), {name: 'KafkaJSConnectionClosedError', retriable: true})
                return answer
              }
            }
            return (value as (...args: unknown[]) => unknown).bind(target)
          },
        })
      }
      const producer = new IdempotentProducer(flaky, kafkaUrl)
      let confirmed = 0
      await producer.send(topic, new Map([[0, [batchOf(0, 20)]]]), (count) => (confirmed += count))
      await producer.send(topic, new Map([[0, [batchOf(20, 30)]]]), (count) => (confirmed += count))
      assert.equal(produced, 3, 'the lost one, its resend, the next send')
      assert.equal(confirmed, 30)
      assert.deepEqual(values((await readAll(wire, topic)).get(0)), batchOf(0, 30).map((record) => record.value))

      // Several batches in flight: the second answer is lost, so it and the ones behind it go again.
      produced = -1
      const batches = Array.from({length: 8}, (_, i) => batchOf(30 + i * 10, 40 + i * 10))
      await producer.send(topic, new Map([[0, batches]]), (count) => (confirmed += count))
      assert.equal(confirmed, 110)
      assert.deepEqual(values((await readAll(wire, topic)).get(0)), batchOf(0, 110).map((record) => record.value), 'each record once, in order')
    })
  })

  it('on a topic with 3 partitions, writes every record exactly once, in order per partition, keyed ones where kafkajs would', async (t) => {
    if (!(await available(t))) return
    await withSession(async ({wire, publisher}) => {
      const topic = await createTopic('partitions', 3)
      const sends: Message[][] = []
      let n = 0
      const message = (extra: Partial<Message> = {}): Message => ({value: `m${n++}`, headers: {'bq-message-id': `id-${n}`}, timestamp: String(Date.now()), ...extra})
      // Unkeyed sends (sticky: one partition per send, rotating), then keyed and explicit ones mixed.
      for (let send = 0; send < 6; send++) sends.push(Array.from({length: 40}, () => message()))
      sends.push(Array.from({length: 90}, (_, i) => (i % 3 === 2 ? message({partition: Math.floor(i / 3) % 3}) : message({key: `customer-${i % 7}`}))))
      sends.push(Array.from({length: 30}, () => message()))
      for (const messages of sends) await publisher.publish(topic, messages)

      const all = await readAll(wire, topic)
      const published = sends.flat()
      const reference = kafkajs.Partitioners.DefaultPartitioner()
      const partitionMetadata = [0, 1, 2].map((partitionId) => ({partitionId, leader: 1, partitionErrorCode: 0, replicas: [], isr: []}))
      const seen = new Map<string, number>()
      for (const [partition, records] of all) {
        let last = -1
        for (const record of records) {
          const value = record.value.toString()
          assert.equal(seen.has(value), false, `${value} was written once`)
          seen.set(value, partition)
          const index = published.findIndex((m) => m.value === value)
          assert.ok(index > last, `partition ${partition} keeps the publish order (${value})`)
          last = index
          const sent = published[index]
          assert.equal(record.headers['bq-message-id']?.toString(), (sent.headers as Record<string, string>)['bq-message-id'])
          if (sent.partition !== undefined) assert.equal(partition, sent.partition, `${value} went to its explicit partition`)
          else if (sent.key !== undefined) {
            assert.equal(record.key?.toString(), sent.key)
            assert.equal(partition, reference({topic, partitionMetadata, message: sent}), `${value} went where kafkajs puts key ${String(sent.key)}`)
          }
        }
      }
      assert.equal(seen.size, published.length, 'every record arrived')
      assert.equal([...all.values()].filter((records) => records.length > 0).length, 3, 'all three partitions were used')
      // Each unkeyed send went to one partition.
      for (const messages of sends.slice(0, 6)) assert.equal(new Set(messages.map((m) => seen.get(m.value as string))).size, 1)
    })
  })

  it('splits a batch larger than the topic accepts and keeps the order; a single record too large fails loudly', async (t) => {
    if (!(await available(t))) return
    await withSession(async ({wire, publisher}) => {
      const topic = await createTopic('too-large', 1, [{name: 'max.message.bytes', value: '20000'}])
      const body = (i: number) => `${String(i).padStart(4, '0')}:${'x'.repeat(995)}`
      await publisher.publish(topic, Array.from({length: 100}, (_, i) => ({value: body(i), timestamp: String(Date.now())})))
      assert.deepEqual(values((await readAll(wire, topic)).get(0)), Array.from({length: 100}, (_, i) => body(i)), 'split into batches the topic takes, in order, each record once')

      const huge = {value: 'y'.repeat(30_000)}
      await assert.rejects(publisher.publish(topic, [{value: 'small'}, huge]), (error: unknown) => {
        assert.ok(error instanceof BqError)
        assert.match(error.message, /larger than topic .* accepts \(its max\.message\.bytes\)/)
        assert.match(error.message, /\(1 of 2 confirmed before the failure\)/)
        return true
      })
      // In flight behind a batch too large: the ones behind it are refused for the gap and sent again after its halves.
      const producer = new IdempotentProducer(wire, kafkaUrl)
      const small = (from: number) => Array.from({length: 5}, (_, i) => ({value: `s${from + i}`, timestamp: Date.now()}))
      const big = Array.from({length: 30}, (_, i) => ({value: body(100 + i), timestamp: Date.now()}))
      let confirmed = 0
      await producer.send(topic, new Map([[0, [small(0), big, small(5), small(10)]]]), (count) => (confirmed += count))
      assert.equal(confirmed, 45)
      const expected = [...small(0), ...big, ...small(5), ...small(10)].map((record) => record.value)
      assert.deepEqual(values((await readAll(wire, topic)).get(0)).slice(101), expected, 'after the 100 records and "small"')

      // The session starts over after a failure, and publishing goes on.
      await publisher.publish(topic, [{value: 'after'}])
      const all = values((await readAll(wire, topic)).get(0))
      assert.equal(all.length, 147)
      assert.deepEqual([all[100], all[146]], ['small', 'after'])
    })
  })
})
