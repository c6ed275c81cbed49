/**
 * Every assert.ok has a message: a failing bare assert.ok makes Node re-read the call site from
 * the file, which goes wrong (and was seen to hang) on tsx-transformed TypeScript.
 *
 * RabbitMQ adapter against a real broker (BQ_TEST_AMQP_URL, default amqp://guest:guest@127.0.0.1:5672).
 * Every queue a test creates is deleted at the end. Rates are printed as diagnostics, never asserted.
 */
import assert from 'node:assert/strict'
import {spawn} from 'node:child_process'
import {after, test, type TestContext} from 'node:test'

import amqp from 'amqplib'
import type {Channel, ChannelModel, GetMessage} from 'amqplib'

import type {BrokerAdapter, OutgoingMessage, ReservedMessage} from '../../../src/lib/brokers/adapter.js'
import {createRabbitAdapter, RabbitAdapter} from '../../../src/lib/brokers/rabbitmq/adapter.js'
import {redactUrl} from '../../../src/lib/brokers/shared/redact.js'
import type {EnvelopeFields} from '../../../src/lib/envelope/fields.js'
import {AuthError, BqError, ConnectionError, QueueNotFoundError} from '../../../src/lib/errors.js'
import {requireBroker, uniqueQueue} from '../../support/brokers.js'
import {getAllAndClose} from './support.js'

const AMQP_URL = process.env.BQ_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672'
const parsed = new URL(AMQP_URL)
const HOST = parsed.hostname
const PORT = Number(parsed.port || 5672)

// ── fixtures ──────────────────────────────────────────────────────────────────────────────────

function fieldsFor(i: number, queue = 'orders'): EnvelopeFields {
  return {
    job: 'urn:babel:orders:created',
    traceId: `7b3f9c2a-e41d-4f88-9b2a-${String(i).padStart(12, '0')}`,
    id: `f1e2d3c4-b5a6-4789-90ab-${String(i).padStart(12, '0')}`,
    queue,
    lang: 'php',
    schemaVersion: 1,
    createdAt: 1749132727000 + i,
    attempts: i % 3,
  }
}

/** A canonical envelope whose bytes a JSON round trip would change (big integer, 99.90, \u00e9). */
function bodyFor(i: number, queue = 'orders'): Buffer {
  const f = fieldsFor(i, queue)
  return Buffer.from(
    `{"job":"${f.job}","trace_id":"${f.traceId}","data":{"order_id":9007199254740993,"n":${i},"amount":99.90,"name":"Jos\\u00e9"},` +
      `"meta":{"id":"${f.id}","queue":"${queue}","lang":"php","schema_version":1,"created_at":${f.createdAt}},"attempts":${f.attempts}}`,
  )
}

function outgoing(count: number, queue = 'orders', start = 0): OutgoingMessage[] {
  return Array.from({length: count}, (_, k) => ({body: bodyFor(start + k, queue), fields: fieldsFor(start + k, queue)}))
}

// ── shared broker handles ─────────────────────────────────────────────────────────────────────

const created = new Set<string>()
const adapters: BrokerAdapter[] = []
let raw: ChannelModel | undefined

function queueName(prefix: string): string {
  const name = uniqueQueue(`rmq-${prefix}`)
  created.add(name)
  return name
}

async function rawConnection(): Promise<ChannelModel> {
  if (raw === undefined) {
    raw = await amqp.connect(AMQP_URL, {noDelay: true})
    raw.on('error', () => undefined)
  }
  return raw
}

/** A raw channel for assertions; broker-closed channels must not crash the test process. */
async function rawChannel(): Promise<Channel> {
  const channel = await (await rawConnection()).createChannel()
  channel.on('error', () => undefined)
  return channel
}

async function open(options: ConstructorParameters<typeof RabbitAdapter>[3] = {}): Promise<RabbitAdapter> {
  const adapter = (await createRabbitAdapter(new URL(AMQP_URL), redactUrl(AMQP_URL), options)) as RabbitAdapter
  adapters.push(adapter)
  return adapter
}

async function live(t: TestContext): Promise<boolean> {
  return requireBroker(t, 'RabbitMQ', HOST, PORT)
}

/** Every message left in a queue, head first, removed (basic.get with auto-ack). */
async function takeAll(queue: string): Promise<GetMessage[]> {
  return getAllAndClose(await rawChannel(), queue)
}

async function readyCount(queue: string): Promise<number> {
  const channel = await rawChannel()
  try {
    return (await channel.checkQueue(queue)).messageCount
  } finally {
    await channel.close().catch(() => undefined)
  }
}

/** Polls until the broker shows `expected` ready messages (requeues after a dropped connection are asynchronous). */
async function waitForCount(queue: string, expected: number, tries = 100): Promise<number> {
  let seen = -1
  for (let i = 0; i < tries; i++) {
    seen = await readyCount(queue)
    if (seen === expected) return seen
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return seen
}

const bodies = (messages: Array<{body?: Buffer; content?: Buffer}>) => messages.map((m) => (m.body ?? m.content)!.toString('utf8'))

after(async () => {
  for (const adapter of adapters) await adapter.close().catch(() => undefined)
  if (created.size > 0 && (await requireBrokerQuiet())) {
    const channel = await rawChannel()
    for (const name of created) await channel.deleteQueue(name).catch(() => undefined)
    await channel.close().catch(() => undefined)
  }
  await raw?.close().catch(() => undefined)
})

async function requireBrokerQuiet(): Promise<boolean> {
  try {
    await rawConnection()
    return true
  } catch {
    return false
  }
}

// ── publishing ────────────────────────────────────────────────────────────────────────────────

test('the §2 projection is on the wire: properties, native-typed headers, persistent, bypass', async (t) => {
  if (!(await live(t))) return
  const adapter = await open()
  const queue = queueName('wire')
  const body = bodyFor(7, queue)
  await adapter.publish(queue, [{body, fields: fieldsFor(7, queue), bypass: true}])
  await adapter.publish(queue, [{body: Buffer.from('not json \u0000\xff'), fields: null}])

  const [first, poison] = await takeAll(queue)
  assert.ok(first.content.equals(body), 'body byte for byte')
  const p = first.properties
  assert.equal(p.type, 'urn:babel:orders:created')
  assert.equal(p.correlationId, fieldsFor(7).traceId)
  assert.equal(p.messageId, fieldsFor(7).id)
  assert.equal(p.appId, 'babelqueue')
  assert.equal(p.contentType, 'application/json')
  assert.equal(p.deliveryMode, 2, 'persistent')
  const headers = p.headers as Record<string, unknown>
  assert.equal(headers['x-attempts'], 1)
  assert.equal(headers['x-schema-version'], 1)
  assert.equal(typeof headers['x-attempts'], 'number', 'x-attempts is an AMQP integer, not a string')
  assert.ok(Number.isInteger(headers['x-schema-version']), 'x-schema-version is an integer')
  assert.equal(headers['x-source-lang'], 'php')
  assert.equal(headers['bq-replay-bypass'], '1')

  assert.equal(poison.content.toString('latin1'), Buffer.from('not json \u0000\xff').toString('latin1'))
  assert.equal(poison.properties.deliveryMode, 2)
  assert.equal(poison.properties.contentType, 'application/json')
  assert.equal(poison.properties.type, undefined)
  assert.equal((poison.properties.headers as Record<string, unknown> | undefined)?.['bq-replay-bypass'], undefined)
})

test('publish creates a missing queue durable and leaves an existing queue\'s arguments alone', async (t) => {
  if (!(await live(t))) return
  const adapter = await open()
  const fresh = queueName('fresh')
  await adapter.publish(fresh, outgoing(1, fresh))
  const channel = await rawChannel()
  // Durable: a durable re-declare with no arguments matches.
  await channel.assertQueue(fresh, {durable: true})

  const shaped = queueName('shaped')
  await channel.assertQueue(shaped, {durable: true, arguments: {'x-max-length': 1000, 'x-message-ttl': 3_600_000}})
  await adapter.publish(shaped, outgoing(2, shaped))
  assert.equal(await readyCount(shaped), 2)
  // The arguments are still there: declaring without them is refused.
  const probe = await rawChannel()
  await assert.rejects(probe.assertQueue(shaped, {durable: true}), /inequivalent arg/)
  await channel.close()
})

test('publish refuses a delay (no delayed-message plugin assumed) and sends nothing', async (t) => {
  if (!(await live(t))) return
  const adapter = await open()
  const queue = queueName('delay')
  assert.equal(adapter.capabilities.delay, false)
  await assert.rejects(adapter.publish(queue, [{body: bodyFor(1), fields: fieldsFor(1), delayMs: 1000}]), (error: unknown) => error instanceof BqError && /delay/.test(error.message))
  // Refused before anything was sent: the queue was not even declared.
  await assert.rejects(adapter.count(queue), (error: unknown) => error instanceof QueueNotFoundError)
})

test('publishes 20,000 messages, every one confirmed, then drains them in order', async (t) => {
  if (!(await live(t))) return
  const adapter = await open()
  const queue = queueName('bulk')
  const total = 20_000
  const messages = outgoing(total, queue)
  const started = process.hrtime.bigint()
  await adapter.publish(queue, messages)
  const publishMs = Number(process.hrtime.bigint() - started) / 1e6
  // Confirmed means enqueued: the count is exact straight away.
  assert.equal(await adapter.count(queue), total)
  t.diagnostic(`publish ${total} persistent, confirmed: ${publishMs.toFixed(0)} ms (${Math.round(total / (publishMs / 1000))} msg/s)`)

  const drainStarted = process.hrtime.bigint()
  const session = await adapter.drain(queue)
  let index = 0
  for (;;) {
    const batch = await session.next(500)
    if (batch.length === 0) break
    for (const message of batch) {
      assert.ok(message.body.equals(messages[index].body), `message ${index} byte-exact and in order`)
      index++
    }
    await session.ack(batch)
  }
  await session.close()
  const drainMs = Number(process.hrtime.bigint() - drainStarted) / 1e6
  t.diagnostic(`drain+ack ${total}: ${drainMs.toFixed(0)} ms (${Math.round(total / (drainMs / 1000))} msg/s)`)
  assert.equal(index, total)
  assert.equal(await adapter.count(queue), 0)
})

test('a publish the broker cannot route (queue deleted after the check) fails instead of vanishing', async (t) => {
  if (!(await live(t))) return
  const adapter = await open()
  const queue = queueName('vanished')
  await adapter.publish(queue, outgoing(1, queue))
  const channel = await rawChannel()
  await channel.deleteQueue(queue)
  // The adapter still believes the queue exists; the default exchange has nowhere to route to.
  await assert.rejects(adapter.publish(queue, outgoing(3, queue)), (error: unknown) => error instanceof BqError && /could not route 3 of 3/.test(error.message))
  // The next publish checks again and declares the queue.
  await adapter.publish(queue, outgoing(2, queue))
  assert.equal(await readyCount(queue), 2)
  await channel.close()
})

test('a connection lost in the middle of a publish fails it in one line, without hanging', async (t) => {
  if (!(await live(t))) return
  const adapter = await open()
  const queue = queueName('cut')
  await adapter.publish(queue, outgoing(1, queue))
  const publishing = adapter.publish(queue, outgoing(20_000, queue, 1))
  await new Promise((resolve) => setTimeout(resolve, 30))
  const internals = adapter as unknown as {connection: {connection: {stream: {destroy(error?: Error): void}}}}
  internals.connection.connection.stream.destroy(new Error('simulated connection reset'))
  await assert.rejects(publishing, (error: unknown) => error instanceof ConnectionError && !error.message.includes('\n'))
  // Whatever the broker confirmed before the cut is there; the call reported none of it as published.
  assert.ok((await readyCount(queue)) >= 1, 'the earlier message is still there')
})

// ── browse ────────────────────────────────────────────────────────────────────────────────────

test('browse leaves a classic queue exactly as it was, order included', async (t) => {
  if (!(await live(t))) return
  const adapter = await open()
  const queue = queueName('browse')
  const messages = outgoing(50, queue)
  await adapter.publish(queue, messages)
  const expected = messages.map((m) => m.body.toString('utf8'))

  const first = await adapter.browse(queue, {limit: 20})
  assert.deepEqual(bodies(first), expected.slice(0, 20))
  assert.equal(first[0].headers.redelivered, false)
  assert.equal(first[0].position, '0')
  assert.equal(first[0].native.job, 'urn:babel:orders:created')
  assert.equal(first[0].native.id, fieldsFor(0).id)
  assert.equal(first[0].native.attempts, 0)
  assert.equal((first[0].headers as {type?: string}).type, 'urn:babel:orders:created')

  const second = await adapter.browse(queue, {limit: 20})
  assert.deepEqual(bodies(second), expected.slice(0, 20))
  // The trace a look leaves: the broker flags handed-back messages as redelivered.
  assert.equal(second[0].headers.redelivered, true)

  const window = await adapter.browse(queue, {offset: 15, limit: 10})
  assert.deepEqual(bodies(window), expected.slice(15, 25))
  assert.deepEqual(window.map((m) => m.position), Array.from({length: 10}, (_, k) => String(15 + k)))

  const beyond = await adapter.browse(queue, {offset: 45, limit: 100})
  assert.deepEqual(bodies(beyond), expected.slice(45))
  assert.deepEqual(await adapter.browse(queue, {offset: 50, limit: 10}), [])
  assert.deepEqual(await adapter.browse(queue, {limit: 0}), [])

  assert.equal(await adapter.count(queue), 50)
  assert.deepEqual(bodies(await takeAll(queue)), expected)
})

test('browse works on a classic queue with arguments (the type probe follows the broker)', async (t) => {
  if (!(await live(t))) return
  const adapter = await open()
  const queue = queueName('argful')
  const channel = await rawChannel()
  await channel.assertQueue(queue, {
    durable: true,
    arguments: {'x-message-ttl': 3_600_000, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': `${queue}.dlq`, 'x-max-length': 100_000, 'x-overflow': 'reject-publish', 'x-single-active-consumer': false},
  })
  await adapter.publish(queue, outgoing(5, queue))
  assert.equal(await adapter.queueType(queue), 'classic')
  assert.deepEqual(bodies(await adapter.browse(queue, {limit: 10})), outgoing(5, queue).map((m) => m.body.toString()))
  assert.equal(await adapter.count(queue), 5)
  // The probe re-declared with the same arguments, so nothing about the queue changed.
  await assert.rejects((await rawChannel()).assertQueue(queue, {durable: true}), /inequivalent arg/)
  await channel.close()
})

test('browse refuses a quorum queue before touching it', async (t) => {
  if (!(await live(t))) return
  const adapter = await open()
  const queue = queueName('quorum')
  const channel = await rawChannel()
  await channel.assertQueue(queue, {durable: true, arguments: {'x-queue-type': 'quorum', 'x-max-length': 1000}})
  await adapter.publish(queue, outgoing(5, queue))

  await assert.rejects(adapter.browse(queue, {limit: 3}), (error: unknown) => error instanceof BqError && /quorum/.test(error.message) && !error.message.includes('\n'))
  assert.equal(await adapter.queueType(queue), 'quorum')
  const left = await takeAll(queue)
  assert.deepEqual(bodies(left), outgoing(5, queue).map((m) => m.body.toString()))
  for (const message of left) {
    assert.equal(message.fields.redelivered, false, 'never delivered')
    assert.ok(!((message.properties.headers as Record<string, unknown>)['x-delivery-count'] as number > 0), 'delivery count untouched')
  }
  await channel.close()
})

test('browse and drain refuse a stream', async (t) => {
  if (!(await live(t))) return
  const adapter = await open()
  const queue = queueName('stream')
  const channel = await rawChannel()
  await channel.assertQueue(queue, {durable: true, arguments: {'x-queue-type': 'stream'}})
  await adapter.publish(queue, outgoing(2, queue))
  await assert.rejects(adapter.browse(queue, {limit: 3}), /stream/)
  await assert.rejects(adapter.drain(queue), (error: unknown) => error instanceof BqError && /stream/.test(error.message))
  await channel.close()
})

test('a missing queue is not found (exit 1, queue-not-found) for browse, count, drain and the delivery-cost check; nothing is declared', async (t) => {
  if (!(await live(t))) return
  const adapter = await open()
  const queue = queueName('missing')
  const notFound = (error: unknown) =>
    error instanceof QueueNotFoundError && error.exitCode === 1 && error.code === 'queue-not-found' && error.message.includes(`queue "${queue}" does not exist`) && !error.message.includes('\n') && !error.message.includes('guest:guest')
  await assert.rejects(adapter.browse(queue, {limit: 5}), notFound)
  await assert.rejects(adapter.count(queue), notFound)
  await assert.rejects(adapter.drain(queue), notFound)
  await assert.rejects(adapter.readsCostDeliveries(queue), notFound)
  // The adapter is still usable, and none of that created the queue.
  await assert.rejects(adapter.count(queue), notFound)
  assert.equal(await readyCount(queue).catch(() => 'missing'), 'missing')
})

test('readsCostDeliveries: a quorum queue counts deliveries; classic queues and streams do not; it reads no message', async (t) => {
  if (!(await live(t))) return
  const adapter = await open()
  const channel = await rawChannel()
  const classic = queueName('cost-classic')
  const quorum = queueName('cost-quorum')
  const limited = queueName('cost-limited')
  const stream = queueName('cost-stream')
  await channel.assertQueue(classic, {durable: true, arguments: {'x-message-ttl': 60_000}})
  await channel.assertQueue(quorum, {durable: true, arguments: {'x-queue-type': 'quorum'}})
  await channel.assertQueue(limited, {durable: true, arguments: {'x-queue-type': 'quorum', 'x-delivery-limit': 2}})
  await channel.assertQueue(stream, {durable: true, arguments: {'x-queue-type': 'stream'}})
  await adapter.publish(limited, outgoing(3, limited))
  assert.equal(await adapter.readsCostDeliveries(classic), undefined)
  assert.equal(await adapter.readsCostDeliveries(stream), undefined)
  for (const queue of [quorum, limited]) {
    const cost = await adapter.readsCostDeliveries(queue)
    assert.ok(cost !== undefined, `${queue} counts deliveries`)
    assert.equal(cost.queue, `RabbitMQ quorum queue "${queue}"`)
    assert.match(cost.cost, /x-delivery-count/)
    assert.ok(cost.alternative !== undefined, 'names a way to look without the cost')
  }
  // Nothing was taken: no message carries a delivery count.
  assert.equal(await readyCount(limited), 3)
  const left = await takeAll(limited)
  assert.deepEqual(left.map((m) => (m.properties.headers as Record<string, unknown> | undefined)?.['x-delivery-count'] ?? 0), [0, 0, 0])
  await channel.close()
})

test('drain on a quorum queue: each message it hands back costs exactly one delivery, even when a consumer is replaced right after an ack', async (t) => {
  if (!(await live(t))) return
  const adapter = await open()
  const queue = queueName('qexact')
  const channel = await rawChannel()
  await channel.assertQueue(queue, {durable: true, arguments: {'x-queue-type': 'quorum'}})
  const messages = outgoing(12, queue)
  await adapter.publish(queue, messages)
  const expected = new Map(messages.map((m) => [m.body.toString(), 0]))
  // Four drains, each taking one message first and acking it (the first consumer has a window
  // of one; the next call wants more), then releasing everything else. Before the fix, the
  // delivery granted after that ack was in flight when the small consumer was cancelled: the
  // queue took it back (+1), delivered it again in the same drain and it was released (+1).
  for (let round = 0; round < 4; round++) {
    const session = await adapter.drain(queue)
    const first = await session.next(1)
    assert.equal(first.length, 1)
    await session.ack(first)
    expected.delete(first[0].body.toString())
    let handed = 1
    for (;;) {
      const batch = await session.next(5)
      if (batch.length === 0) break
      handed += batch.length
      await session.release(batch)
    }
    await session.close()
    assert.equal(handed, 12 - round, `round ${round}: every message present was handed out`)
    for (const [body, count] of expected) expected.set(body, count + 1)
  }
  assert.equal(await waitForCount(queue, 8), 8)
  const left = await takeAll(queue)
  const counts = new Map(left.map((m) => [m.content.toString(), (m.properties.headers as Record<string, unknown>)['x-delivery-count']]))
  assert.deepEqual(counts, expected, 'x-delivery-count is the number of drains that handed the message back')
  await channel.close()
})

// ── native dead-lettering ────────────────────────────────────────────────────────────────────

test('a queue fed by a dead-letter exchange reads like any queue, x-death decoded', async (t) => {
  if (!(await live(t))) return
  const adapter = await open()
  const orders = queueName('orders')
  const dlq = `${orders}.dlq`
  created.add(dlq)
  const channel = await rawChannel()
  await channel.assertQueue(dlq, {durable: true})
  await channel.assertQueue(orders, {durable: true, arguments: {'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': dlq}})
  const message = outgoing(1, orders)[0]
  await adapter.publish(orders, [message])

  const before = Date.now()
  const got = await channel.get(orders, {noAck: false})
  assert.ok(got, 'got')
  channel.reject(got, false)
  assert.equal(await waitForCount(dlq, 1), 1)

  const [dead] = await adapter.browse(dlq, {limit: 5})
  assert.ok(dead.body.equals(message.body), 'dead-lettered body byte for byte')
  assert.equal(dead.native.job, 'urn:babel:orders:created')
  const dl = dead.native.nativeDeadLetter
  assert.equal(dl?.reason, 'rejected')
  assert.equal(dl?.originalQueue, orders)
  assert.ok(dl?.failedAt !== undefined && dl.failedAt >= Math.floor(before / 1000) * 1000 - 1000 && dl.failedAt <= Date.now() + 1000, 'failedAt is the time of the reject (whole seconds)')
  const xDeath = (dead.headers.headers as Record<string, unknown>)['x-death'] as Array<Record<string, unknown>>
  assert.equal(xDeath[0].queue, orders)
  assert.equal(typeof xDeath[0].time, 'string', 'timestamps shown as ISO strings')
  assert.doesNotThrow(() => JSON.stringify(dead.headers))

  const session = await adapter.drain(dlq)
  const [taken] = await session.next(10)
  assert.equal(taken.native.nativeDeadLetter?.reason, 'rejected')
  await session.ack([taken])
  await session.close()
  assert.equal(await adapter.count(dlq), 0)
  await channel.close()
})

// ── drain ─────────────────────────────────────────────────────────────────────────────────────

test('drain: released and un-acked messages return to their original positions at close', async (t) => {
  if (!(await live(t))) return
  // A tiny window forces several consumer generations, including ones starved by released messages.
  const adapter = await open({drain: {window: 4}})
  const queue = queueName('release')
  const messages = outgoing(30, queue)
  await adapter.publish(queue, messages)
  const expected = messages.map((m) => m.body.toString())

  const session = await adapter.drain(queue)
  const acked = new Set<string>()
  const seen: string[] = []
  let round = 0
  for (;;) {
    const batch = await session.next(7)
    if (batch.length === 0) break
    seen.push(...bodies(batch))
    // Ack every third message, release the rest; leave the last batch un-settled entirely.
    const toAck = batch.filter((_, k) => (round + k) % 3 === 0)
    const toRelease = batch.filter((_, k) => (round + k) % 3 !== 0)
    round += batch.length
    if (seen.length >= 28) break
    await session.ack(toAck)
    for (const m of toAck) acked.add(m.body.toString())
    await session.release(toRelease)
  }
  assert.deepEqual(seen, expected.slice(0, seen.length), 'handed out in queue order, none twice')
  await session.close()
  await session.close() // safe twice

  const left = bodies(await takeAll(queue))
  assert.deepEqual(left, expected.filter((body) => !acked.has(body)), 'everything not acked is back, in the original order')
})

test('drain stops at the messages present when it started, or at max', async (t) => {
  if (!(await live(t))) return
  const adapter = await open()
  const queue = queueName('bound')
  await adapter.publish(queue, outgoing(10, queue))
  const session = await adapter.drain(queue)
  await adapter.publish(queue, outgoing(5, queue, 10))
  const taken: ReservedMessage[] = []
  for (;;) {
    const batch = await session.next(100)
    if (batch.length === 0) break
    taken.push(...batch)
  }
  assert.equal(taken.length, 10)
  assert.deepEqual(bodies(taken), outgoing(10, queue).map((m) => m.body.toString()))
  await session.ack(taken)
  await session.close()
  // The five published later were never delivered, so they are not even flagged redelivered.
  const rest = await takeAll(queue)
  assert.equal(rest.length, 5)
  assert.ok(rest.every((m) => m.fields.redelivered === false), 'messages published after the drain started were never delivered')

  await adapter.publish(queue, outgoing(10, queue))
  const limited = await adapter.drain(queue, {max: 4})
  const first = await limited.next(3)
  const second = await limited.next(3)
  assert.equal(first.length + second.length, 4)
  assert.deepEqual(await limited.next(3), [])
  await limited.ack([...first, ...second])
  await limited.close()
  const remaining = await takeAll(queue)
  assert.equal(remaining.length, 6)
  assert.ok(remaining.every((m) => m.fields.redelivered === false), 'nothing beyond max was taken')
})

test('drain returns promptly when others empty the queue under it', async (t) => {
  if (!(await live(t))) return
  const adapter = await open()
  const queue = queueName('stolen')
  await adapter.publish(queue, outgoing(10, queue))
  const session = await adapter.drain(queue)
  const thief = await rawChannel()
  for (let i = 0; i < 6; i++) assert.ok(await thief.get(queue, {noAck: true}), 'another consumer takes a message')
  const taken: ReservedMessage[] = []
  for (;;) {
    const batch = await session.next(100)
    if (batch.length === 0) break
    taken.push(...batch)
  }
  assert.equal(taken.length, 4)
  await session.release(taken)
  await session.close()
  assert.equal(await waitForCount(queue, 4), 4)
  await thief.close()
})

test('drain on a quorum queue takes and acks; released messages come back with a delivery count', async (t) => {
  if (!(await live(t))) return
  const adapter = await open({drain: {window: 3}})
  const queue = queueName('qdrain')
  const channel = await rawChannel()
  await channel.assertQueue(queue, {durable: true, arguments: {'x-queue-type': 'quorum'}})
  await adapter.publish(queue, outgoing(8, queue))
  const session = await adapter.drain(queue)
  let taken = 0
  // A window of 3, smaller than the batches asked for: fresh consumers continue past full windows.
  for (;;) {
    const batch = await session.next(8)
    if (batch.length === 0) break
    const firstIndex = taken
    taken += batch.length
    await session.ack(batch.filter((_, k) => firstIndex + k < 5))
    await session.release(batch.filter((_, k) => firstIndex + k >= 5))
  }
  assert.equal(taken, 8)
  await session.close()
  assert.equal(await waitForCount(queue, 3), 3)
  const left = await takeAll(queue)
  assert.deepEqual(bodies(left).sort(), outgoing(8, queue).slice(5).map((m) => m.body.toString()).sort())
  assert.ok(left.every((m) => ((m.properties.headers as Record<string, unknown>)['x-delivery-count'] as number) >= 1), 'released quorum messages carry x-delivery-count >= 1')
  await channel.close()
})

test('drain: a dropped connection leaves every un-acked message on the queue, and fails in one line', async (t) => {
  if (!(await live(t))) return
  const adapter = await open()
  const queue = queueName('dropped')
  const messages = outgoing(20, queue)
  await adapter.publish(queue, messages)
  const session = await adapter.drain(queue)
  const batch = await session.next(10)
  assert.equal(batch.length, 10)
  await session.ack(batch.slice(0, 3))
  await session.release(batch.slice(3, 5))

  // Reset the drain's socket without an AMQP close, as a network failure would.
  const internals = session as unknown as {connection: {connection: {stream: {destroy(error?: Error): void}}}}
  internals.connection.connection.stream.destroy(new Error('simulated connection reset'))
  await new Promise((resolve) => setTimeout(resolve, 100))

  await assert.rejects(session.next(10), (error: unknown) => error instanceof ConnectionError && !error.message.includes('\n'))
  await assert.rejects(session.ack(batch.slice(5)), (error: unknown) => error instanceof BqError)
  await session.close()
  assert.equal(await adapter.recover(queue), 0)
  assert.equal(await waitForCount(queue, 17), 17)
  assert.deepEqual(bodies(await takeAll(queue)), messages.slice(3).map((m) => m.body.toString()), 'all but the acked three, in order')
  // The adapter's own connection is unaffected.
  assert.equal(await adapter.count(queue), 0)
})

test('drain: a killed process (SIGKILL) leaves every un-acked message on the queue', async (t) => {
  if (!(await live(t))) return
  const adapter = await open()
  const queue = queueName('killed')
  const messages = outgoing(20, queue)
  await adapter.publish(queue, messages)
  const script = `
    import {createRabbitAdapter} from './src/lib/brokers/rabbitmq/adapter.ts'
    const adapter = await createRabbitAdapter(new URL(process.env.URL), 'amqp://redacted')
    const session = await adapter.drain(process.env.QUEUE)
    const batch = await session.next(12)
    await session.ack(batch.slice(0, 4))
    process.stdout.write('held ' + batch.length + '\\n')
    setInterval(() => {}, 1000)
  `
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: process.cwd(),
    env: {...process.env, URL: AMQP_URL, QUEUE: queue},
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const line = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString()
      if (out.includes('\n')) resolve(out.trim())
    })
    child.once('exit', (code) => reject(new Error(`child exited early (${code})`)))
  })
  assert.equal(line, 'held 12')
  // While the child lives its un-acked messages (12 taken, 4 acked, plus any read-ahead) are not ready.
  assert.ok((await readyCount(queue)) <= 8, 'the child holds at least the 8 it took and did not ack')
  child.kill('SIGKILL')
  await new Promise((resolve) => child.once('exit', resolve))
  assert.equal(await waitForCount(queue, 16), 16)
  assert.deepEqual(bodies(await takeAll(queue)), messages.slice(4).map((m) => m.body.toString()))
})

test('drain: a queue deleted under the drain surfaces as a BqError, not a crash', async (t) => {
  if (!(await live(t))) return
  const adapter = await open()
  const queue = queueName('deleted')
  await adapter.publish(queue, outgoing(5, queue))
  const session = await adapter.drain(queue)
  const batch = await session.next(2)
  assert.equal(batch.length, 2)
  const channel = await rawChannel()
  await channel.deleteQueue(queue)
  await new Promise((resolve) => setTimeout(resolve, 100))
  await assert.rejects(session.next(5), (error: unknown) => error instanceof BqError && /deleted/.test(error.message))
  await session.close()
  await channel.close()
})

test('drain rejects settling a message twice or one it did not hand out', async (t) => {
  if (!(await live(t))) return
  const adapter = await open()
  const queue = queueName('twice')
  await adapter.publish(queue, outgoing(3, queue))
  const session = await adapter.drain(queue)
  const batch = await session.next(3)
  await session.ack(batch.slice(0, 1))
  await assert.rejects(session.ack(batch.slice(0, 1)), /already acked or released/)
  await assert.rejects(session.release([{...batch[1], handle: {}}]), /did not hand out/)
  await session.close()
  assert.equal(await waitForCount(queue, 2), 2)
})

// ── connection handling ───────────────────────────────────────────────────────────────────────

test('connection refused is a ConnectionError (exit 4), bad credentials and a missing vhost AuthErrors (exit 6), naming only the redacted URL', async (t) => {
  if (!(await live(t))) return
  const refused = 'amqp://guest:s3cretpw@127.0.0.1:1/'
  await assert.rejects(createRabbitAdapter(new URL(refused), redactUrl(refused)), (error: unknown) => {
    assert.ok(error instanceof ConnectionError, 'error instanceof ConnectionError')
    assert.equal(error.exitCode, 4)
    assert.ok(!error.message.includes('s3cretpw'), '!error.message.includes("s3cretpw")')
    assert.ok(error.message.includes('amqp://guest:***@127.0.0.1:1/'), 'error.message.includes("amqp://guest:***@127.0.0.1:1/")')
    return true
  })
  const badAuth = `amqp://guest:wrong-s3cret@${HOST}:${PORT}/`
  await assert.rejects(createRabbitAdapter(new URL(badAuth), redactUrl(badAuth)), (error: unknown) => {
    assert.ok(error instanceof AuthError, 'error instanceof AuthError')
    assert.equal(error.exitCode, 6)
    assert.equal(error.code, 'auth')
    assert.ok(!error.message.includes('wrong-s3cret'), '!error.message.includes("wrong-s3cret")')
    assert.match(error.message, /refused the login of user "guest"/)
    return true
  })
  const badVhost = `amqp://guest:guest@${HOST}:${PORT}/no-such-vhost-bq`
  await assert.rejects(createRabbitAdapter(new URL(badVhost), redactUrl(badVhost)), (error: unknown) => error instanceof AuthError && error.code === 'permission' && /vhost "no-such-vhost-bq"/.test(error.message))
})

test('a lost adapter connection fails later calls in one line; close is safe twice', async (t) => {
  if (!(await live(t))) return
  const adapter = await open()
  const queue = queueName('lost')
  await adapter.publish(queue, outgoing(1, queue))
  const internals = adapter as unknown as {connection: {connection: {stream: {destroy(error?: Error): void}}}}
  internals.connection.connection.stream.destroy(new Error('simulated connection reset'))
  await new Promise((resolve) => setTimeout(resolve, 100))
  await assert.rejects(adapter.count(queue), (error: unknown) => error instanceof ConnectionError && !error.message.includes('\n'))
  await assert.rejects(adapter.publish(queue, outgoing(1, queue)), ConnectionError)
  await adapter.close()
  await adapter.close()
  assert.equal(await readyCount(queue), 1)
})

test('capabilities', async (t) => {
  if (!(await live(t))) return
  const adapter = await open()
  assert.deepEqual(adapter.capabilities, {truePeek: false, headers: true, delay: false, nativeDlq: true, atomicMove: false, ordered: true, queuesExist: true, afterCrash: 'broker-returns'})
  assert.equal(adapter.kind, 'rabbitmq')
  assert.equal(adapter.displayUrl, redactUrl(AMQP_URL))
})
