/**
 * A filtered redrive on RabbitMQ that leaves thousands of messages behind: more than one consumer
 * window (1,000) of held messages, so the drain runs on several consumer channels (one per
 * window, so an ack never scans past the messages held on other channels: bench/rabbitmq/). It
 * must move exactly the selected messages, leave the rest in their order, and keep within its
 * channel budget (`maxChannels`, made small here so the budget and channel reuse are exercised;
 * windows widen once the budget is nearly spent).
 *
 * The redrive engine runs in-process with an adapter opened with drain tuning; the speed is
 * measured by bench/rabbitmq/filtered-redrive.js, never asserted here.
 * Every assert.ok has a message (see adapter.test.ts).
 */
import assert from 'node:assert/strict'
import {after, test, type TestContext} from 'node:test'

import amqp from 'amqplib'
import type {Channel, ChannelModel} from 'amqplib'

import type {BrokerAdapter, DrainOptions, DrainSession, OutgoingMessage} from '../../../src/lib/brokers/adapter.js'
import {createRabbitAdapter} from '../../../src/lib/brokers/rabbitmq/adapter.js'
import type {DrainTuning} from '../../../src/lib/brokers/rabbitmq/drain.js'
import {redactUrl} from '../../../src/lib/brokers/shared/redact.js'
import {annotate, fieldsOf, make} from '../../../src/lib/envelope/index.js'
import {parseSelector} from '../../../src/lib/ops/match.js'
import {redrive} from '../../../src/lib/ops/redrive.js'
import {requireBroker, uniqueQueue} from '../../support/brokers.js'

const AMQP_URL = process.env.BQ_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672'
const parsed = new URL(AMQP_URL)

const created = new Set<string>()
const adapters: BrokerAdapter[] = []
let raw: ChannelModel | undefined

async function rawChannel(): Promise<Channel> {
  if (raw === undefined) {
    raw = await amqp.connect(AMQP_URL, {noDelay: true})
    raw.on('error', () => undefined)
  }
  const channel = await raw.createChannel()
  channel.on('error', () => undefined)
  return channel
}

after(async () => {
  for (const adapter of adapters) await adapter.close().catch(() => undefined)
  if (raw !== undefined) {
    const channel = await rawChannel()
    for (const name of created) await channel.deleteQueue(name).catch(() => undefined)
    await channel.close().catch(() => undefined)
    await raw.close().catch(() => undefined)
  }
})

async function live(t: TestContext): Promise<boolean> {
  return requireBroker(t, 'RabbitMQ', parsed.hostname, Number(parsed.port || 5672))
}

async function open(drain: DrainTuning): Promise<BrokerAdapter> {
  const adapter = await createRabbitAdapter(new URL(AMQP_URL), redactUrl(AMQP_URL), {drain})
  adapters.push(adapter)
  return adapter
}

/** Dead letters of `queue`: message i is selected (reason `selected`) when `selected(i)`. */
function deadLetters(queue: string, count: number, selected: (i: number) => boolean): OutgoingMessage[] {
  return Array.from({length: count}, (_, i) => {
    const envelope = annotate(make('urn:babel:orders:created', `{"order_id":${i}}`, {queue}), {
      reason: selected(i) ? 'selected' : 'failed',
      originalQueue: queue,
      error: 'Payment gateway timeout',
      failedAt: 1749132730000,
      attempts: 3,
    })
    return {body: envelope.toBuffer(), fields: fieldsOf(envelope)}
  })
}

/** Every order_id on a queue, head first, removed; `counts` gets each one's x-delivery-count. */
async function orderIds(queue: string, counts?: number[]): Promise<number[]> {
  const channel = await rawChannel()
  const ids: number[] = []
  for (;;) {
    const message = await channel.get(queue, {noAck: true})
    if (message === false) break
    ids.push((JSON.parse(message.content.toString('utf8')) as {data: {order_id: number}}).data.order_id)
    counts?.push(Number((message.properties.headers as Record<string, unknown> | undefined)?.['x-delivery-count'] ?? 0))
  }
  await channel.close()
  return ids
}

/** The source adapter, with its drain sessions watched: the most consumer channels open at once. */
function watched(adapter: BrokerAdapter): {source: BrokerAdapter; peakChannels: () => number} {
  let peak = 0
  const sessions: DrainSession[] = []
  const source = Object.create(adapter) as BrokerAdapter
  source.drain = async (queue: string, options?: DrainOptions) => {
    const session = await adapter.drain(queue, options)
    sessions.push(session)
    const channels = () => (session as unknown as {openChannels: number}).openChannels
    const next = session.next.bind(session)
    session.next = async (max: number) => {
      const batch = await next(max)
      peak = Math.max(peak, channels())
      return batch
    }
    return session
  }
  return {source, peakChannels: () => peak}
}

const cases = [
  {
    name: '3,000 messages, 1 in 10 selected, default windows, a budget of 2 channels',
    count: 3000,
    tuning: {maxChannels: 2},
    selected: (i: number) => i % 10 === 3,
  },
  {
    name: '4,000 messages: the first 1,000 all selected (fully acked windows free their channels), then 1 in 10; windows of 100, a budget of 4 channels',
    count: 4000,
    tuning: {window: 100, maxChannels: 4},
    selected: (i: number) => i < 1000 || i % 10 === 7,
  },
  {
    name: 'a quorum DLQ (every message left behind costs exactly one delivery, however many consumers the drain replaced), 2,500 messages, windows of 100, a budget of 3 channels',
    count: 2500,
    tuning: {window: 100, maxChannels: 3},
    selected: (i: number) => i % 10 === 0 || (i >= 1200 && i < 1300),
    quorum: true,
  },
]

for (const c of cases) {
  test(`a filtered redrive leaving thousands behind moves exactly the selected, leaves the rest in order: ${c.name}`, async (t) => {
    if (!(await live(t))) return
    const queue = uniqueQueue('rmq-filtered')
    const dlq = `${queue}.dlq`
    created.add(queue).add(dlq)
    const adapter = await open(c.tuning)
    if (c.quorum) {
      const channel = await rawChannel()
      await channel.assertQueue(dlq, {durable: true, arguments: {'x-queue-type': 'quorum'}})
      await channel.close()
    }
    await adapter.publish(dlq, deadLetters(queue, c.count, c.selected))
    const all = Array.from({length: c.count}, (_, i) => i)
    const selected = all.filter(c.selected)
    const left = all.filter((i) => !c.selected(i))
    assert.ok(left.length > 2000, 'more than two windows of messages are left behind')

    const {source, peakChannels} = watched(adapter)
    const report = await redrive({source, dlq, selectors: [parseSelector('reason=selected')], max: 0, bypass: false, dryRun: false, acceptDeliveryCost: c.quorum})
    assert.deepEqual(report.counts, {examined: c.count, redriven: selected.length, would_redrive: 0, skipped: left.length, poison: 0, failed: 0})
    assert.equal(report.stopped_early, false)
    assert.ok(peakChannels() >= 2, `the drain used more than one consumer channel (peak ${peakChannels()})`)
    assert.ok(peakChannels() <= c.tuning.maxChannels, `at most ${c.tuning.maxChannels} consumer channels at once (peak ${peakChannels()})`)

    assert.deepEqual(await orderIds(queue), selected, 'exactly the selected ones moved, in order')
    const counts: number[] = []
    const back = await orderIds(dlq, counts)
    if (c.quorum) {
      // A quorum queue puts returned messages back in the order they were returned, not their original one.
      assert.deepEqual([...back].sort((x, y) => x - y), left, 'the rest are back on the DLQ')
      assert.deepEqual(counts, back.map(() => 1), 'each handed back exactly once')
    } else {
      assert.deepEqual(back, left, 'the rest are back on the DLQ, in order')
    }
  })
}
