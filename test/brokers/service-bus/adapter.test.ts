/**
 * Service Bus specifics, with the real @azure/service-bus SDK against bq's test server: the §4
 * projection as the SDK puts it on the wire, bodies the SDK's JSON parsing would change, native
 * dead-letter inspection and redrive, scheduled delivery, delivery counts, lock expiry after a
 * crash, duplicate detection on redrive, and a topic with subscriptions.
 */
import assert from 'node:assert/strict'
import {execFile} from 'node:child_process'
import {after, before, describe, it} from 'node:test'
import {promisify} from 'node:util'

import {ServiceBusClient} from '@azure/service-bus'

import type {BrokerAdapter} from '../../../src/lib/brokers/adapter.js'
import {openBroker} from '../../../src/lib/brokers/registry.js'
import {annotate, decode, fieldsOf, make} from '../../../src/lib/envelope/index.js'
import {inspectDlq} from '../../../src/lib/ops/inspect.js'
import {viewOf} from '../../../src/lib/ops/message-view.js'
import {redrive} from '../../../src/lib/ops/redrive.js'
import {uniqueQueue} from '../../support/brokers.js'
import {applicationPropertyTypes, decodeParts} from './server/amqp-codec.js'
import {startServiceBusTestServer, type ServiceBusTestServer} from './server/server.js'
import {assertBodies, out, takeAll} from '../../suites/contract-suite.js'

const LOCK_MS = 2000
let server: ServiceBusTestServer
let raw: ServiceBusClient
before(async () => {
  server = await startServiceBusTestServer({lockDurationMs: LOCK_MS, maxDeliveryCount: 4, duplicateDetectionMs: 600_000})
  raw = new ServiceBusClient(server.connectionString)
})
after(async () => {
  await raw.close()
  await server.close()
})

async function withAdapter(fn: (adapter: BrokerAdapter) => Promise<void>): Promise<void> {
  const adapter = await openBroker(server.connectionString)
  try {
    await fn(adapter)
  } finally {
    await adapter.close()
  }
}

function envelope(queue: string, data = '{"order_id":1042,"amount":99.90}') {
  return make('urn:babel:orders:created', data, {queue})
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('service-bus adapter', () => {
  it('puts the §4 projection on the wire as the SDK sends it: Subject, CorrelationId, MessageId, ContentType, typed properties, exact body', async () => {
    await withAdapter(async (adapter) => {
      const q = uniqueQueue('sb-projection')
      const env = envelope(q)
      await adapter.publish(q, [{body: env.toBuffer(), fields: fieldsOf(env), bypass: true}])
      const [parts] = server.received(q)
      const decoded = decodeParts(parts)
      assert.equal(decoded.subject, 'urn:babel:orders:created')
      assert.equal(decoded.correlation_id, env.traceId)
      assert.equal(decoded.message_id, env.id)
      assert.equal(decoded.content_type, 'application/json')
      const props = applicationPropertyTypes(parts)
      // Native AMQP numbers, not strings (the binding's "numbers stay numbers").
      assert.equal(props['bq-schema-version'].value, 1)
      assert.match(props['bq-schema-version'].type, /int|Uint/i)
      assert.equal(props['bq-created-at'].value, env.createdAt)
      assert.match(props['bq-created-at'].type, /long/i)
      assert.deepEqual({type: props['bq-source-lang'].type.startsWith('Str'), value: props['bq-source-lang'].value}, {type: true, value: 'node'})
      assert.equal(props['bq-replay-bypass'].value, '1')
      // One AMQP data section holding the envelope bytes.
      const body = decoded.body as {typecode: number; content: Buffer}
      assert.equal(body.typecode, 0x75)
      assert.ok(body.content.equals(env.toBuffer()))
    })
  })

  it('round-trips bodies the SDK would otherwise JSON-parse or re-encode, through peek and drain', async () => {
    await withAdapter(async (adapter) => {
      const q = uniqueQueue('sb-bodies')
      const bodies = [Buffer.from('"just a string"'), Buffer.from('42'), Buffer.from('{"n":9007199254740993,"x":1e3,"z":-0}'), Buffer.from([0xff, 0xfe, 0x00, 0x7b]), Buffer.from('null'), Buffer.from('[1,2]')]
      await adapter.publish(q, bodies.map((body) => out(body)))
      assertBodies(await adapter.browse(q, {limit: 10}), bodies)
      const session = await adapter.drain(q)
      const taken = await takeAll(session, 4)
      assertBodies(taken, bodies)
      await session.ack(taken)
      await session.close()
      assert.equal(await adapter.count(q), 0)
    })
  })

  it('shows native dead-letter reasons in dlq inspect and redrives $DeadLetterQueue back to its queue', async () => {
    await withAdapter(async (adapter) => {
      const q = uniqueQueue('sb-native-dlq')
      const env = envelope(q)
      await adapter.publish(q, [{body: env.toBuffer(), fields: fieldsOf(env)}])
      const receiver = raw.createReceiver(q, {skipParsingBodyAsJson: true})
      const [message] = await receiver.receiveMessages(1, {maxWaitTimeInMs: 5000})
      await receiver.deadLetterMessage(message, {deadLetterReason: 'PaymentDeclined', deadLetterErrorDescription: 'card expired'})
      await receiver.close()
      const dlq = `${q}/$DeadLetterQueue`
      assert.equal(await adapter.count(q), 0)
      assert.equal(await adapter.count(dlq), 1)
      const [found] = await adapter.browse(dlq, {limit: 5})
      assert.deepEqual(found.native.nativeDeadLetter, {reason: 'PaymentDeclined', error: 'card expired', originalQueue: q})
      const report = await inspectDlq(adapter, {dlq, groupBy: ['reason', 'original_queue'], scanLimit: 100})
      assert.deepEqual(report.groups.map((g) => [g.key, g.count]), [[{reason: 'PaymentDeclined', original_queue: q}, 1]])
      const result = await redrive({source: adapter, dlq, selectors: [], max: 0, bypass: false, dryRun: false})
      assert.equal(result.counts.redriven, 1)
      assert.equal(await adapter.count(dlq), 0)
      const [copy] = await adapter.browse(q, {limit: 5})
      assert.equal(decode(copy.body).id, env.id)
      // A republished copy has its own MessageId, so duplicate detection cannot drop it.
      assert.match(String(copy.headers.messageId), new RegExp(`^${env.id}~`))
    })
  })

  it('redrives past duplicate detection, which drops a plain re-send of the same meta.id', async () => {
    await withAdapter(async (adapter) => {
      const q = uniqueQueue('sb-dedup')
      const env = envelope(q)
      const message = {body: env.toBuffer(), fields: fieldsOf(env)}
      await adapter.publish(q, [message])
      await adapter.publish(q, [message])
      assert.equal(await adapter.count(q), 1, 'the test server detects duplicates like Service Bus')
      await adapter.publish(q, [{...message, republish: true}])
      assert.equal(await adapter.count(q), 2)
    })
  })

  it('schedules --delay messages with ScheduledEnqueueTime: invisible to count and drain until due', async () => {
    await withAdapter(async (adapter) => {
      const q = uniqueQueue('sb-delay')
      const env = envelope(q)
      await adapter.publish(q, [{body: env.toBuffer(), fields: fieldsOf(env), delayMs: 1500}])
      assert.equal(await adapter.count(q), 0)
      const peeked = await raw.createReceiver(q).peekMessages(5)
      assert.equal(peeked[0].state, 'scheduled')
      assert.ok(peeked[0].scheduledEnqueueTimeUtc !== undefined && peeked[0].scheduledEnqueueTimeUtc.getTime() > Date.now())
      await sleep(2000)
      assert.equal(await adapter.count(q), 1)
    })
  })

  it('reconciles attempts with the delivery count: abandoned twice reads attempts 2 on peek and on drain', async () => {
    await withAdapter(async (adapter) => {
      const q = uniqueQueue('sb-attempts')
      const env = envelope(q)
      await adapter.publish(q, [{body: env.toBuffer(), fields: fieldsOf(env)}])
      const receiver = raw.createReceiver(q, {skipParsingBodyAsJson: true})
      for (let i = 0; i < 2; i++) {
        const [message] = await receiver.receiveMessages(1, {maxWaitTimeInMs: 5000})
        await receiver.abandonMessage(message)
      }
      await receiver.close()
      const [peeked] = await adapter.browse(q, {limit: 1})
      assert.equal(peeked.native.deliveryCount, 3, 'the count a receive would report, 1-based')
      assert.equal(viewOf(peeked, adapter.binding).attempts, 2)
      const session = await adapter.drain(q)
      const [taken] = await session.next(1)
      assert.equal(taken.native.deliveryCount, 3)
      assert.equal(viewOf(taken, adapter.binding).attempts, 2)
      await session.close()
      // Closing abandoned it once more.
      assert.equal((await adapter.browse(q, {limit: 1}))[0].native.deliveryCount, 4)
    })
  })

  it('auto-dead-letters at MaxDeliveryCount with reason MaxDeliveryCountExceeded', async () => {
    await withAdapter(async (adapter) => {
      const q = uniqueQueue('sb-maxdelivery')
      const env = annotate(envelope(q), {reason: 'failed', originalQueue: q, attempts: 1})
      await adapter.publish(q, [{body: env.toBuffer(), fields: fieldsOf(env)}])
      const receiver = raw.createReceiver(q)
      for (let i = 0; i < 4; i++) {
        const [message] = await receiver.receiveMessages(1, {maxWaitTimeInMs: 5000})
        await receiver.abandonMessage(message)
      }
      await receiver.close()
      assert.equal(await adapter.count(q), 0)
      const [dead] = await adapter.browse(`${q}/$DeadLetterQueue`, {limit: 1})
      assert.equal(dead.native.nativeDeadLetter?.reason, 'MaxDeliveryCountExceeded')
      // The body's own dead_letter block wins over the native reason in views.
      assert.equal(viewOf(dead, adapter.binding).deadLetter?.reason, 'failed')
    })
  })

  it('gets a crashed drain\'s messages back when their locks expire; recover() has nothing to do', async () => {
    await withAdapter(async (adapter) => {
      const q = uniqueQueue('sb-crash')
      const bodies = Array.from({length: 5}, (_, i) => Buffer.from(`{"n":${i}}`))
      await adapter.publish(q, bodies.map((body) => out(body)))
      const {stdout} = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'test/brokers/service-bus/server/crash-drain.ts', server.connectionString, q, '3', '1'], {timeout: 60_000})
      assert.match(stdout, /taken 3/)
      assert.equal(await adapter.recover(q), 0)
      // A peek cannot see locks, so all five still show; a receive gets only the two unlocked ones.
      assert.equal(await adapter.count(q), 5)
      const early = await adapter.drain(q)
      assertBodies(await early.next(5), bodies.slice(3))
      await early.close()
      await sleep(LOCK_MS + 500)
      const late = await adapter.drain(q)
      const back = await takeAll(late, 5)
      assertBodies(back, bodies)
      // The expired locks counted as deliveries; the two that were handed back at close did too.
      assert.deepEqual(back.map((m) => m.native.deliveryCount), [2, 2, 2, 2, 2])
      await late.close()
    })
  })

  it('keeps released messages locked (renewed) past the lock duration until close', async () => {
    await withAdapter(async (adapter) => {
      const q = uniqueQueue('sb-hold')
      const bodies = Array.from({length: 3}, (_, i) => Buffer.from(`{"h":${i}}`))
      await adapter.publish(q, bodies.map((body) => out(body)))
      const session = await adapter.drain(q)
      const taken = await session.next(3)
      await session.release(taken)
      await sleep(LOCK_MS * 2)
      const other = raw.createReceiver(q)
      assert.deepEqual(await other.receiveMessages(3, {maxWaitTimeInMs: 500}), [], 'still locked by the run')
      await other.close()
      await session.close()
      assertBodies(await adapter.browse(q, {limit: 5}), bodies)
    })
  })

  it('publishes to a topic and reads and drains its subscriptions', async () => {
    await withAdapter(async (adapter) => {
      const topic = uniqueQueue('sb-topic')
      server.namespace.createTopic(topic, ['audit', 'billing'])
      const env = envelope(topic)
      await adapter.publish(topic, [{body: env.toBuffer(), fields: fieldsOf(env)}])
      assertBodies(await adapter.browse(`${topic}/Subscriptions/audit`, {limit: 5}), [env.toBuffer()])
      const session = await adapter.drain(`${topic}/Subscriptions/billing`)
      const taken = await takeAll(session, 5)
      assertBodies(taken, [env.toBuffer()])
      await session.ack(taken)
      await session.close()
      assert.equal(await adapter.count(`${topic}/Subscriptions/billing`), 0)
      assert.equal(await adapter.count(`${topic}/Subscriptions/audit`), 1)
      await assert.rejects(adapter.publish(`${topic}/Subscriptions/audit`, [out(Buffer.from('{}'))]), /publish to the topic/)
    })
  })

  it('reports a wrong key as refused credentials (exit 6) without echoing it', async () => {
    const bad = server.connectionString.replace(/SharedAccessKey=[^;]+/, 'SharedAccessKey=d3Jvbmcta2V5LXNlY3JldA==')
    const adapter = await openBroker(bad)
    try {
      await assert.rejects(adapter.count(uniqueQueue('sb-auth')), (error: unknown) => {
        assert.equal((error as {exitCode?: number}).exitCode, 6)
        assert.match(String((error as Error).message), /refused the credentials/)
        assert.ok(!String((error as Error).message).includes('d3Jvbmcta2V5'))
        return true
      })
    } finally {
      await adapter.close()
    }
  })
})
