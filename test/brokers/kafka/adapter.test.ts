/**
 * Kafka-specific adapter behaviour against a real broker: the binding on the wire (read back with
 * a plain kafkajs consumer), reading that leaves no consumer-group trace, the redrive progress in
 * `bq-redrive.<topic>` (restart, released records, re-appending past the metadata budget, a
 * concurrent run), the attempts reset, URL parsing and failing fast.
 */
import assert from 'node:assert/strict'
import {readFileSync} from 'node:fs'
import {after, describe, it, type TestContext} from 'node:test'

import type {BrokerAdapter} from '../../../src/lib/brokers/adapter.js'
import {createAdapterFromString, redriveGroup} from '../../../src/lib/brokers/kafka/adapter.js'
import {parseKafkaUrl} from '../../../src/lib/brokers/kafka/url.js'
import {leaseGroup} from '../../../src/lib/brokers/kafka/lease.js'
import {openBroker, redactUrl} from '../../../src/lib/brokers/registry.js'
import {decode, fieldsOf} from '../../../src/lib/envelope/index.js'
import {BqError, ConnectionError, ExitCode, UsageError} from '../../../src/lib/errors.js'
import {browseQueue} from '../../../src/lib/ops/browse.js'
import {inspectDlq} from '../../../src/lib/ops/inspect.js'
import {redrive} from '../../../src/lib/ops/redrive.js'
import {requireBroker, uniqueQueue} from '../../support/brokers.js'
import {testCerts} from '../../support/certs.js'
import {assertBodies, numbered, out, takeAll} from '../../suites/contract-suite.js'
import {deleteTestTopics, kafkaHost, kafkaPort, kafkaUrl, rawKafka, withAdmin} from './support.js'

const available = (t: TestContext) => requireBroker(t, 'Kafka', kafkaHost, kafkaPort)
const used: string[] = []
const topic = (label: string) => {
  const q = uniqueQueue(`kafka-${label}`)
  used.push(q)
  return q
}
after(async () => {
  // Names are only taken once the broker answered.
  if (used.length > 0) await deleteTestTopics(used).catch(() => undefined)
})

async function withAdapter(t: TestContext, work: (adapter: BrokerAdapter) => Promise<void>, open: () => Promise<BrokerAdapter> = () => openBroker(kafkaUrl)): Promise<void> {
  if (!(await available(t))) return
  const adapter = await open()
  try {
    await work(adapter)
  } finally {
    await adapter.close()
  }
}

interface RawRecord {
  value: Buffer
  headers: Record<string, string>
  timestamp: string
  offset: string
}

/** Every record of a topic as a plain kafkajs consumer sees it (its throwaway group is deleted after). */
async function consumeAll(name: string, expected: number): Promise<RawRecord[]> {
  const groupId = `bq-test-raw-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`
  const consumer = rawKafka().consumer({groupId})
  const records: RawRecord[] = []
  await consumer.connect()
  try {
    await consumer.subscribe({topic: name, fromBeginning: true})
    let done: () => void = () => undefined
    const finished = new Promise<void>((resolve) => (done = resolve))
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({message}) => {
        const headers: Record<string, string> = {}
        for (const [key, value] of Object.entries(message.headers ?? {})) headers[key] = String(value)
        records.push({value: message.value ?? Buffer.alloc(0), headers, timestamp: message.timestamp, offset: message.offset})
        if (records.length >= expected) done()
      },
    })
    // A pending timer would keep this file's process alive for its full 30 s after the last test.
    let timer: NodeJS.Timeout | undefined
    await Promise.race([finished, new Promise((resolve) => (timer = setTimeout(resolve, 30_000)))])
    clearTimeout(timer)
  } finally {
    await consumer.disconnect()
    await withAdmin((admin) => admin.deleteGroups([groupId])).catch(() => undefined)
  }
  return records
}

/** What the redrive group holds for partition 0 of a topic. */
async function redriveOffsets(name: string): Promise<{offset: string; metadata: string}> {
  return withAdmin(async (admin) => {
    const [entry] = await admin.fetchOffsets({groupId: redriveGroup(name), topics: [name]})
    const partition = entry.partitions.find((p) => p.partition === 0)!
    return {offset: partition.offset, metadata: partition.metadata ?? ''}
  })
}

/** An hour ago: recent enough for any topic to keep a record stamped with it. */
const recent = Math.trunc(Date.now() / 1000) * 1000 - 3_600_000

const deadLettered = (queue: string, n: number, createdAt = recent) =>
  `{"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","data":{"order_id":${n},"amount":99.90,"big":9007199254740993},` +
  `"meta":{"id":"id-${n}","queue":"${queue}","lang":"php","schema_version":1,"created_at":${createdAt}},"attempts":3,` +
  `"dead_letter":{"reason":"failed","error":"boom","failed_at":1749132730000,"original_queue":"${queue}","attempts":3,"lang":"php"}}`

describe('kafka adapter', () => {
  it('puts the §6 projection on the wire: value, bq- headers, timestamp = meta.created_at', async (t) => {
    await withAdapter(t, async (adapter) => {
      const q = topic('wire')
      const envelope = decode(deadLettered(q, 1))
      const fields = {...fieldsOf(envelope), attempts: 3}
      const poison = Buffer.from('not json {')
      await adapter.publish(q, [
        {body: envelope.toBuffer(), fields},
        {body: envelope.toBuffer(), fields: {...fields, attempts: 0}, bypass: true},
        {body: poison, fields: null},
      ])
      const records = await consumeAll(q, 3)
      assert.equal(records.length, 3)
      assert.ok(records[0].value.equals(envelope.toBuffer()), 'the value is the envelope, byte for byte')
      assert.deepEqual(records[0].headers, {
        'bq-job': 'urn:babel:orders:created',
        'bq-trace-id': '7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b',
        'bq-message-id': 'id-1',
        'bq-schema-version': '1',
        'bq-source-lang': 'php',
        'bq-attempts': '3',
      })
      assert.equal(records[0].timestamp, String(recent))
      assert.equal(records[1].headers['bq-attempts'], '0')
      assert.equal(records[1].headers['bq-replay-bypass'], '1')
      // A body that is not an envelope carries no bq- headers.
      assert.deepEqual(records[2].headers, {})
      assert.ok(records[2].value.equals(poison))

      // The inverse projection and the display.
      const [first] = await adapter.browse(q, {limit: 1})
      assert.equal(first.position, '0:0')
      assert.equal(first.enqueuedAt, recent)
      assert.deepEqual(first.native, {job: 'urn:babel:orders:created', traceId: '7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b', id: 'id-1', lang: 'php', schemaVersion: 1, attempts: 3, createdAt: recent})
      assert.deepEqual(first.headers, {topic: q, partition: 0, offset: 0, timestamp: recent, key: null, headers: records[0].headers})
    })
  })

  it('stamps meta.created_at only where the topic keeps and accepts it, else the current time', async (t) => {
    await withAdapter(t, async (adapter) => {
      const q = topic('stamp')
      const forever = topic('stamp-forever')
      await withAdmin((admin) => admin.createTopics({topics: [{topic: forever, numPartitions: 1, replicationFactor: 1, configEntries: [{name: 'retention.ms', value: '-1'}]}]}))
      const old = 1_600_000_000_000
      const future = Date.now() + 2 * 3_600_000
      const messages = [recent, old, future].map((createdAt, n) => {
        const envelope = decode(deadLettered(q, n, createdAt))
        return {body: envelope.toBuffer(), fields: fieldsOf(envelope)}
      })
      const before = Date.now()
      await adapter.publish(q, messages)
      await adapter.publish(forever, messages)
      const after = Date.now()
      const stamps = async (name: string) => (await consumeAll(name, 3)).map((record) => Number(record.timestamp))
      // Default topic (7-day retention, future limit 1 h): the old and the future one get the current time.
      const [kept, aged, ahead] = await stamps(q)
      assert.equal(kept, recent)
      for (const stamp of [aged, ahead]) assert.ok(stamp >= before && stamp <= after, `${stamp} is not the publish time`)
      // A topic that never deletes keeps the old one as created_at; the future one is still refused by the broker's limit.
      const [keptForever, agedForever, aheadForever] = await stamps(forever)
      assert.equal(keptForever, recent)
      assert.equal(agedForever, old)
      assert.ok(aheadForever >= before && aheadForever <= after)
      // The bodies are untouched either way.
      assert.equal(decode((await adapter.browse(q, {limit: 3}))[1].body).createdAt, old)
    })
  })

  it('reads without leaving a trace: no consumer group, no committed offsets', async (t) => {
    await withAdapter(t, async (adapter) => {
      const q = topic('trace')
      await adapter.publish(q, numbered(20).map((body) => out(body)))
      const groupsBefore = new Set((await withAdmin((admin) => admin.listGroups())).groups.map((g) => g.groupId))
      assert.equal((await adapter.browse(q, {limit: 5})).length, 5)
      assert.equal((await adapter.browse(q, {offset: 5, limit: 100})).length, 15)
      assert.equal(await adapter.count(q), 20)
      const inspected = await browseQueue(adapter, {queue: q, limit: 100, scanLimit: 100})
      assert.equal(inspected.scanned, 20)
      const groupsAfter = (await withAdmin((admin) => admin.listGroups())).groups.map((g) => g.groupId)
      assert.deepEqual(groupsAfter.filter((g) => !groupsBefore.has(g)), [], 'no consumer group was created')
      // One admin connection for every group: the shared test broker keeps the groups of every
      // earlier run, and a connection per group made this test take half a minute.
      const committed = await withAdmin((admin) =>
        Promise.all(groupsAfter.map(async (groupId) => ({groupId, offsets: await admin.fetchOffsets({groupId, topics: [q]})}))),
      )
      for (const {groupId, offsets} of committed) {
        for (const partition of offsets[0]?.partitions ?? []) assert.equal(partition.offset, '-1', `group ${groupId} has an offset for ${q}`)
      }
    })
  })

  it('restarts a redrive where the last run stopped, and never passes a released record', async (t) => {
    await withAdapter(t, async (adapter) => {
      const q = topic('restart')
      const bodies = numbered(10)
      await adapter.publish(q, bodies.map((body) => out(body)))
      const first = await adapter.drain(q)
      const taken = await first.next(6)
      await first.ack([taken[0], taken[2], taken[3], taken[5]])
      await first.release([taken[1], taken[4]])
      await first.close()
      // Waiting: the two left behind in their places, then the four never read.
      assert.equal(await adapter.count(q), 6)
      assertBodies(await adapter.browse(q, {limit: 10}), [1, 4, 6, 7, 8, 9].map((i) => bodies[i]))
      // The group's offset is the first record still waiting; the metadata lists the done runs above it.
      assert.deepEqual(await redriveOffsets(q), {offset: '1', metadata: 'bq1:1.2.1.1'})

      const second = await adapter.drain(q)
      const again = await takeAll(second, 3)
      assertBodies(again, [1, 4, 6, 7, 8, 9].map((i) => bodies[i]))
      await second.ack(again)
      await second.close()
      assert.equal(await adapter.count(q), 0)
      assert.deepEqual(await redriveOffsets(q), {offset: '10', metadata: ''})
    })
  })

  it('after a run that died without closing, the next run starts from its last commit (at-least-once)', async (t) => {
    if (!(await available(t))) return
    const q = topic('died')
    const bodies = numbered(8)
    const dead = await openBroker(kafkaUrl)
    const next = await openBroker(kafkaUrl)
    try {
      await dead.publish(q, bodies.map((body) => out(body)))
      const session = await dead.drain(q)
      const taken = await session.next(5)
      // Acked (committed), then three more taken and never settled: the run "dies" here. Its
      // lease would lapse 30 s later (or be taken over at once from a dead pid): clear it now.
      await session.ack(taken.slice(0, 2))
      await withAdmin((admin) => admin.setOffsets({groupId: leaseGroup(q), topic: q, partitions: [{partition: 0, offset: '0'}]}))
      const resumed = await next.drain(q)
      const seen = await takeAll(resumed, 10)
      assertBodies(seen, bodies.slice(2))
      await resumed.ack(seen)
      await resumed.close()
      assert.equal(await next.count(q), 0)
      // The old run wakes up: its progress is stale, and it refuses to overwrite the newer one.
      await assert.rejects(session.ack(taken.slice(2, 3)), (error: unknown) => error instanceof BqError && /changed while this run was draining/.test(error.message))
      // Closing it writes nothing: it has nothing newer than what it committed.
      await session.close()
      assert.deepEqual(await redriveOffsets(q), {offset: '8', metadata: ''})
    } finally {
      await dead.close().catch(() => undefined)
      await next.close()
    }
  })

  it('redrive resets attempts in the body and the bq-attempts header to "0"', async (t) => {
    await withAdapter(t, async (adapter) => {
      const q = topic('attempts')
      const dlq = `${q}.dlq`
      const bodies = [1, 2].map((n) => deadLettered(q, n))
      await adapter.publish(dlq, bodies.map((text) => ({body: Buffer.from(text), fields: fieldsOf(decode(text))})))
      const [before] = await adapter.browse(dlq, {limit: 1})
      assert.equal(before.native.attempts, 3)
      const report = await redrive({source: adapter, dlq, selectors: [], max: 0, bypass: false, dryRun: false})
      assert.equal(report.counts.redriven, 2)
      const records = await consumeAll(q, 2)
      assert.equal(records.length, 2)
      for (const [i, record] of records.entries()) {
        assert.equal(record.headers['bq-attempts'], '0')
        const copy = decode(record.value)
        assert.equal(copy.attempts, 0)
        assert.equal(copy.deadLetter, undefined)
        assert.equal(copy.id, `id-${i + 1}`)
        assert.equal(record.timestamp, String(recent))
        assert.match(record.value.toString(), /"amount":99\.90,"big":9007199254740993/)
      }
      assert.equal(await adapter.count(dlq), 0)
      // The DLQ log still holds both records; they are just done for the redrive group.
      assert.equal((await consumeAll(dlq, 2)).length, 2)
    })
  })

  it('past the metadata budget, released records move to the back of their partition instead of being lost or re-sent', async (t) => {
    const small = () => createAdapterFromString(kafkaUrl, redactUrl(kafkaUrl), {stateSoftLimit: 24, stateHardLimit: 60})
    await withAdapter(t, async (adapter) => {
      const q = topic('budget')
      const bodies = numbered(30)
      await adapter.publish(q, bodies.map((body) => out(body)))
      const session = await adapter.drain(q)
      const taken = await takeAll(session, 10)
      // Every other record is left behind: each one splits a finished run.
      const left = taken.filter((_, i) => i % 2 === 1)
      await session.release(left)
      await session.ack(taken.filter((_, i) => i % 2 === 0))
      await session.close()
      const waiting = await adapter.browse(q, {limit: 100})
      // Nothing lost, nothing re-sent: exactly the 15 left behind wait, some in place and the rest re-appended.
      assert.equal(waiting.length, 15)
      assert.equal(await adapter.count(q), 15)
      assert.deepEqual(waiting.map((m) => m.body.toString()).sort(), left.map((m) => m.body.toString()).sort())
      const moved = waiting.filter((m) => Number(m.position!.split(':')[1]) >= 30)
      assert.ok(moved.length > 0, 'some released records were re-appended')
      assert.ok(moved.length < 15, 'the first ones stayed in place')
      const held = await redriveOffsets(q)
      assert.ok(held.metadata.length <= 60, held.metadata)
      // The copies are the records exactly (headers and timestamps included).
      const original = left.find((m) => m.body.equals(moved[0].body))!
      assert.deepEqual(moved[0].headers.headers, original.headers.headers)
      assert.equal(moved[0].enqueuedAt, original.enqueuedAt)
    }, small)
  })

  it('reads the log itself from the beginning, an offset, a time or the last N, whatever the redrive did', async (t) => {
    await withAdapter(t, async (adapter) => {
      const q = topic('log')
      const bodies = numbered(10)
      // Record timestamps recent + 1000, + 2000, … (meta.created_at).
      await adapter.publish(q, bodies.map((body, i) => ({body, fields: {job: 'urn:babel:test:m', traceId: 't', id: `id-${i}`, queue: q, lang: 'node', schemaVersion: 1, createdAt: recent + (i + 1) * 1000, attempts: 0}})))
      const session = await adapter.drain(q)
      await session.ack(await session.next(4))
      await session.close()
      assertBodies(await adapter.browse(q, {limit: 20}), bodies.slice(4))
      assertBodies(await adapter.browse(q, {limit: 20, from: {kind: 'beginning'}}), bodies)
      assertBodies(await adapter.browse(q, {limit: 3, offset: 2, from: {kind: 'beginning'}}), bodies.slice(2, 5))
      assertBodies(await adapter.browse(q, {limit: 20, from: {kind: 'offset', offset: 7}}), bodies.slice(7))
      assertBodies(await adapter.browse(q, {limit: 20, from: {kind: 'offset', offset: 1, partition: 0}}), bodies.slice(1))
      assertBodies(await adapter.browse(q, {limit: 20, from: {kind: 'offset', offset: 99}}), [])
      assertBodies(await adapter.browse(q, {limit: 20, from: {kind: 'time', at: recent + 8500}}), bodies.slice(8))
      assertBodies(await adapter.browse(q, {limit: 20, from: {kind: 'time', at: recent + 99_000}}), [])
      assertBodies(await adapter.browse(q, {limit: 20, from: {kind: 'last', count: 2}}), bodies.slice(8))
      assertBodies(await adapter.browse(q, {limit: 20, from: {kind: 'last', count: 50}}), bodies)
      await assert.rejects(adapter.browse(q, {limit: 1, from: {kind: 'offset', offset: 0, partition: 3}}), /has no partition 3/)
      // Reading the log changed nothing.
      assert.equal(await adapter.count(q), 6)
    })
  })

  it('lists the retry tiers <topic>.retry.<n> of a DLQ for dlq inspect', async (t) => {
    await withAdapter(t, async (adapter) => {
      const q = topic('tiers')
      await adapter.publish(`${q}.dlq`, [out(Buffer.from('{"a":1}'))])
      await adapter.publish(`${q}.retry.10`, numbered(1).map((body) => out(body)))
      await adapter.publish(`${q}.retry.2`, numbered(2).map((body) => out(body)))
      await withAdmin((admin) => admin.createTopics({topics: [{topic: `${q}.retry.1`, numPartitions: 1, replicationFactor: 1}, {topic: `${q}.retry.x`, numPartitions: 1, replicationFactor: 1}]}))
      const expected = [
        {queue: `${q}.retry.1`, role: 'retry tier 1', count: 0},
        {queue: `${q}.retry.2`, role: 'retry tier 2', count: 2},
        {queue: `${q}.retry.10`, role: 'retry tier 10', count: 1},
      ]
      assert.deepEqual(await adapter.relatedQueues!(`${q}.dlq`), expected)
      const report = await inspectDlq(adapter, {dlq: `${q}.dlq`, groupBy: ['reason'], scanLimit: 10})
      assert.deepEqual(report.related_queues, expected)
      assert.deepEqual(await adapter.relatedQueues!(`${q}-none.dlq`), [])
    })
  })

  it('on a topic with several partitions, reads and drains partition by partition, each in offset order', async (t) => {
    const threeWay = kafkaUrl.includes('?') ? `${kafkaUrl}&partitions=3` : `${kafkaUrl}?partitions=3`
    await withAdapter(t, async (adapter) => {
      const q = topic('partitions')
      const bodies = numbered(30)
      // Unkeyed records of one batch share a partition, and the next batch takes the next one (sticky partitioning).
      for (let send = 0; send < 3; send++) await adapter.publish(q, bodies.slice(send * 10, send * 10 + 10).map((body) => out(body)))
      const all = await adapter.browse(q, {limit: 100})
      assert.equal(all.length, 30)
      const order = all.map((m) => m.position!.split(':').map(Number))
      assert.deepEqual(order, [...order].sort((a, b) => a[0] - b[0] || a[1] - b[1]), 'partition then offset')
      assert.ok(new Set(order.map(([p]) => p)).size > 1, 'the records went to more than one partition')
      assert.deepEqual(all.map((m) => m.body.toString()).sort(), bodies.map(String).sort())
      const session = await adapter.drain(q)
      const taken = await takeAll(session, 7)
      assert.deepEqual(taken.map((m) => m.position), all.map((m) => m.position))
      await session.release(taken.filter((_, i) => i % 2 === 1))
      await session.ack(taken.filter((_, i) => i % 2 === 0))
      await session.close()
      assert.equal(await adapter.count(q), 15)
      const again = await adapter.drain(q)
      const left = await takeAll(again, 10)
      assert.deepEqual(left.map((m) => m.position), all.filter((_, i) => i % 2 === 1).map((m) => m.position))
      await again.ack(left)
      await again.close()
      assert.equal(await adapter.count(q), 0)
    }, () => openBroker(threeWay))
  })

  it('a browse resumed past what it read (peek --follow) returns the records appended since, in every partition, each once', async (t) => {
    const threeWay = kafkaUrl.includes('?') ? `${kafkaUrl}&partitions=3` : `${kafkaUrl}?partitions=3`
    await withAdapter(t, async (adapter) => {
      const q = topic('resume')
      const bodies = numbered(9)
      // Sticky partitioning: each batch goes to one partition, the next batch to another.
      for (let send = 0; send < 2; send++) await adapter.publish(q, bodies.slice(send * 2, send * 2 + 2).map((body) => out(body)))
      const first = await adapter.browse(q, {limit: 100, offset: 0})
      assert.equal(first.length, 4)
      for (let send = 0; send < 3; send++) await adapter.publish(q, [out(bodies[4 + send])])
      await adapter.publish(q, bodies.slice(7).map((body) => out(body)))
      const next = await adapter.browse(q, {limit: 100, offset: 4})
      assert.deepEqual(next.map((m) => m.body.toString()).sort(), bodies.slice(4).map(String).sort())
      assert.ok(new Set([...first, ...next].map((m) => m.position!.split(':')[0])).size > 1, 'the records went to more than one partition')
      assert.deepEqual(await adapter.browse(q, {limit: 100, offset: 9}), [])
    }, () => openBroker(threeWay))
  })

  it('refuses delayed publishing and invalid topic names', async (t) => {
    await withAdapter(t, async (adapter) => {
      await assert.rejects(adapter.publish(topic('delay'), [{...out(Buffer.from('{}')), delayMs: 1000}]), (error: unknown) => error instanceof UsageError && /no delayed delivery/.test(error.message))
      await assert.rejects(adapter.count('orders dlq'), (error: unknown) => error instanceof UsageError && /not a valid Kafka topic name/.test(error.message))
    })
  })

  it('opens a URL listing several brokers, skipping one that is down', async (t) => {
    if (!(await available(t))) return
    const several = kafkaUrl.replace('kafka://', 'kafka://127.0.0.1:19099,')
    const adapter = await openBroker(several)
    try {
      assert.equal(adapter.displayUrl, several)
      const q = topic('several')
      await adapter.publish(q, [out(Buffer.from('{"a":1}'))])
      assert.equal(await adapter.count(q), 1)
    } finally {
      await adapter.close()
    }
  })

  it('fails fast with a one-line, redacted ConnectionError (exit 4) when no broker answers', async () => {
    const started = Date.now()
    await assert.rejects(openBroker('kafka://bq:hunter2-secret@127.0.0.1:19099?sasl=plain'), (error: unknown) => {
      assert.ok(error instanceof ConnectionError)
      assert.equal(error.exitCode, ExitCode.connection)
      assert.equal(error.message, 'cannot connect to kafka://bq:***@127.0.0.1:19099?sasl=plain: connection refused')
      return true
    })
    assert.ok(Date.now() - started < 15_000, `took ${Date.now() - started} ms`)
  })
})

describe('kafka URL', () => {
  const parse = (url: string, env: NodeJS.ProcessEnv = {}) => parseKafkaUrl(url, redactUrl(url), env)

  it('lists bootstrap servers, with the default port and IPv6 literals', () => {
    assert.deepEqual(parse('kafka://a:1,b,[::1]:9093').brokers, ['a:1', 'b:9092', '::1:9093'])
    assert.deepEqual(parse('kafka://127.0.0.1:19092/').brokers, ['127.0.0.1:19092'])
    const plain = parse('kafka://h')
    assert.equal(plain.tls, undefined)
    assert.equal(plain.sasl, undefined)
    assert.equal(plain.clientId, 'bq')
    assert.equal(plain.partitions, 1)
    assert.equal(plain.replication, undefined)
  })

  it('takes SASL credentials from the URL (percent-decoded) or from the environment', () => {
    const fromUrl = parse('kafka://alice:p%40ss%2Fw0rd@h1:9092,h2:9092?sasl=SCRAM-SHA-512&ssl=true')
    assert.deepEqual(fromUrl.sasl, {mechanism: 'scram-sha-512', username: 'alice', password: 'p@ss/w0rd'})
    assert.deepEqual(fromUrl.tls?.options, {rejectUnauthorized: true})
    assert.deepEqual(fromUrl.brokers, ['h1:9092', 'h2:9092'])
    assert.ok(fromUrl.secrets.includes('p@ss/w0rd'))
    const fromEnv = parse('kafka://h?sasl=plain', {BQ_KAFKA_USERNAME: 'bob', BQ_KAFKA_PASSWORD: 'env-secret'})
    assert.deepEqual(fromEnv.sasl, {mechanism: 'plain', username: 'bob', password: 'env-secret'})
    // URL userinfo wins over the environment.
    assert.equal(parse('kafka://carol:pw@h?sasl=scram-sha-256', {BQ_KAFKA_USERNAME: 'bob', BQ_KAFKA_PASSWORD: 'x'}).sasl?.username, 'carol')
  })

  it('takes the shared TLS options (any of them turns TLS on) and the topic-creation options', () => {
    const certs = testCerts()
    const ca = readFileSync(certs.ca, 'utf8')
    const target = parse(`kafka://h?ca=${encodeURIComponent(certs.ca)}&client_id=ops&partitions=3&replication=2`)
    // No servername unless asked: kafkajs names each broker it connects to.
    assert.deepEqual(target.tls?.options, {rejectUnauthorized: true, ca: [ca]})
    assert.equal(target.tls?.caPath, certs.ca)
    assert.equal(target.clientId, 'ops')
    assert.equal(target.partitions, 3)
    assert.equal(target.replication, 2)
    const mtls = parse(`kafka://h1,h2?cert=${encodeURIComponent(certs.clientCert)}&key=${encodeURIComponent(certs.clientKey)}&servername=kafka.internal`)
    assert.equal(mtls.tls?.options.cert, readFileSync(certs.clientCert, 'utf8'))
    assert.equal(mtls.tls?.options.key, readFileSync(certs.clientKey, 'utf8'))
    assert.equal(mtls.tls?.options.servername, 'kafka.internal')
    assert.deepEqual(parse('kafka://h?insecure=true').tls?.options, {rejectUnauthorized: false})
    assert.equal(parse('kafka://h?ssl=false').tls, undefined)
  })

  it('refuses what it cannot honour, without echoing secrets', () => {
    const refusals: Array<[string, RegExp]> = [
      ['kafka://h?sasl=gssapi', /sasl must be one of plain, scram-sha-256, scram-sha-512/],
      ['kafka://h?sasl=plain', /needs a username and password/],
      ['kafka://u:hunter2-secret@h', /carries credentials but no SASL mechanism/],
      ['kafka://h?sasl_mechanism=plain', /unknown parameter "sasl_mechanism"/],
      ['kafka://h?ssl=maybe', /ssl must be true or false/],
      ['kafka://h?ca=/nonexistent/ca.pem', /cannot read ca=\/nonexistent\/ca\.pem/],
      ['kafka://h?ssl=false&ca=/nonexistent/ca.pem', /ca= needs TLS: use ssl=true/],
      ['kafka://h?cert=/nonexistent/client.pem', /needs both cert=PATH and key=PATH/],
      ['kafka://h?partitions=0', /partitions must be a positive integer/],
      ['kafka://h:99999', /out of range/],
      ['kafka://h/orders', /has no path/],
      ['kafka://', /names no broker/],
    ]
    for (const [url, expected] of refusals) {
      assert.throws(() => parse(url), (error: unknown) => {
        assert.ok(error instanceof UsageError, url)
        assert.match(error.message, expected)
        assert.ok(!error.message.includes('hunter2-secret'), error.message)
        return true
      })
    }
  })

  it('redacts the password of a multi-broker URL', () => {
    assert.equal(redactUrl('kafka://alice:hunter2@h1:9092,h2:9092?sasl=plain'), 'kafka://alice:***@h1:9092,h2:9092?sasl=plain')
  })
})
