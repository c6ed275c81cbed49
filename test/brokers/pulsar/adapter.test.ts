/**
 * What is particular to the Pulsar adapter, against the real standalone (BQ_TEST_PULSAR_URL):
 * the §5 properties as a raw WebSocket consumer sees them, a peek that changes no subscription,
 * cursor or backlog, native delayed delivery, redelivery-count reconciliation, a dead-letter-policy
 * topic read like any other, and refusals. The first block needs no broker (message ids, URLs).
 */
import assert from 'node:assert/strict'
import {createServer, type AddressInfo} from 'node:net'
import {after, describe, it} from 'node:test'
import type {TestContext} from 'node:test'
import WebSocket from 'ws'

import type {BrokerAdapter} from '../../../src/lib/brokers/adapter.js'
import {createAdapter} from '../../../src/lib/brokers/pulsar/adapter.js'
import {comparePositions, decodeMessageId, encodeMessageId, inDeletedRanges, parseDeletedRanges} from '../../../src/lib/brokers/pulsar/message-id.js'
import {parsePulsarUrl, topicOf} from '../../../src/lib/brokers/pulsar/url.js'
import {openBroker, redactUrl} from '../../../src/lib/brokers/registry.js'
import {fieldsOf, make} from '../../../src/lib/envelope/index.js'
import {BqError, ConnectionError, UsageError} from '../../../src/lib/errors.js'
import {viewOf} from '../../../src/lib/ops/message-view.js'
import {pulsarBinding} from '../../../src/lib/brokers/pulsar/binding.js'
import {uniqueQueue} from '../../support/brokers.js'
import {admin, available, pulsarUrl, topicPath, wsBase} from './support.js'
import {assertBodies, numbered, out, takeAll} from '../../suites/contract-suite.js'


const used: string[] = []
const queue = (label: string) => {
  const q = uniqueQueue(`pulsar-${label}`)
  used.push(q)
  return q
}
after(async () => {
  for (const q of used) {
    for (const name of [q, `${q}-workers-DLQ`]) await fetch(`${admin.origin}/admin/v2/${topicPath(name)}?force=true`, {method: 'DELETE'}).catch(() => undefined)
  }
})

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as AddressInfo
  await new Promise((resolve) => server.close(resolve))
  return port
}

async function adminJson(path: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${admin.origin}/admin/v2/${path}`)
  assert.ok(response.ok, `GET ${path}: HTTP ${response.status}`)
  return (await response.json()) as Record<string, unknown>
}

interface RawMessage {
  messageId: string
  payload: string
  properties: Record<string, string>
  publishTime: string
  redeliveryCount: number
}

/** A raw WebSocket consumer (no bq code): messages as Pulsar delivers them. */
async function rawConsumer(q: string, subscription: string, params: Record<string, string>): Promise<{next(timeoutMs?: number): Promise<RawMessage>; send(frame: unknown): void; close(): void}> {
  const socket = new WebSocket(`${wsBase}/ws/v2/consumer/${topicPath(q)}/${subscription}?${new URLSearchParams(params).toString()}`)
  const inbox: RawMessage[] = []
  let wake: (() => void) | undefined
  socket.on('message', (data) => {
    inbox.push(JSON.parse(data.toString()) as RawMessage)
    wake?.()
  })
  await new Promise((resolve, reject) => {
    socket.once('open', resolve)
    socket.once('error', reject)
  })
  return {
    async next(timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs
      while (inbox.length === 0) {
        if (Date.now() > deadline) throw new Error(`no message on ${q}/${subscription} within ${timeoutMs} ms`)
        await new Promise<void>((resolve) => {
          wake = resolve
          setTimeout(resolve, 100)
        })
      }
      return inbox.shift()!
    },
    send: (frame) => socket.send(JSON.stringify(frame)),
    close: () => socket.close(),
  }
}

async function withAdapter(t: TestContext, fn: (adapter: BrokerAdapter) => Promise<void>, url = pulsarUrl): Promise<void> {
  if (!(await available(t))) return
  const adapter = await openBroker(url)
  try {
    await fn(adapter)
  } finally {
    await adapter.close()
  }
}

describe('pulsar message ids and URLs (no broker)', () => {
  it('encodes and decodes MessageIdData, including the -1 entry of an empty ledger', () => {
    for (const [ledger, entry] of [[7, 0], [7, 3], [123456789, 987654], [13, -1], [-1, -1]]) {
      const decoded = decodeMessageId(encodeMessageId(ledger, entry))
      assert.deepEqual(decoded, {ledger, entry, batchIndex: -1, batchSize: 0})
    }
    // What the broker sent for 7:0 (ledger, entry, batch size 0).
    assert.deepEqual(decodeMessageId('CAcQADAA'), {ledger: 7, entry: 0, batchIndex: -1, batchSize: 0})
    assert.equal(decodeMessageId('!!'), undefined)
    assert.ok(comparePositions({ledger: 7, entry: 9}, {ledger: 8, entry: 0}) < 0)
  })

  it('reads a cursor\'s acknowledged ranges as (open, closed]', () => {
    const ranges = parseDeletedRanges('[(7:2..7:4], (7:9..8:1]]')
    assert.deepEqual(ranges.length, 2)
    const inside = (ledger: number, entry: number) => inDeletedRanges({ledger, entry}, ranges)
    assert.deepEqual([inside(7, 2), inside(7, 3), inside(7, 4), inside(7, 5), inside(7, 10), inside(8, 1), inside(8, 2)], [false, true, true, false, true, true, false])
    assert.deepEqual(parseDeletedRanges('[]'), [])
  })

  it('parses the URL: admin endpoint defaults, token from the environment, subscription options, topic names', () => {
    const plain = parsePulsarUrl(new URL('pulsar://broker.example:6650'), 'x', {})
    assert.equal(plain.adminBase, 'http://broker.example:8080')
    assert.equal(plain.wsBase, 'ws://broker.example:8080')
    assert.equal(plain.subscription, 'bq-redrive')
    assert.equal(plain.subscriptionType, 'Exclusive')
    assert.equal(plain.ensureSubscription, 'babelqueue')
    const tls = parsePulsarUrl(new URL('pulsar+ssl://broker.example:6651?subscription=babelqueue&subscription_type=Shared&ensure_subscription='), 'x', {BQ_PULSAR_TOKEN: 'env-token'})
    assert.equal(tls.adminBase, 'https://broker.example:8443')
    assert.equal(tls.wsBase, 'wss://broker.example:8443')
    assert.equal(tls.token, 'env-token')
    assert.equal(tls.subscriptionType, 'Shared')
    assert.equal(tls.ensureSubscription, '')
    assert.equal(parsePulsarUrl(new URL('pulsar://h?token=url-token'), 'x', {BQ_PULSAR_TOKEN: 'env-token'}).token, 'url-token')
    assert.equal(redactUrl('pulsar://h:6650?token=eyJhbGciOi.x.y&admin=http://h:8080'), 'pulsar://h:6650?token=***&admin=http://h:8080')
    assert.deepEqual(topicOf('orders.dlq', plain, 'x'), {full: 'persistent://public/default/orders.dlq', path: 'persistent/public/default/orders.dlq', local: 'orders.dlq'})
    assert.equal(topicOf('persistent://acme/jobs/orders', plain, 'x').path, 'persistent/acme/jobs/orders')
    assert.throws(() => topicOf('non-persistent://public/default/x', plain, 'x'), UsageError)
    assert.throws(() => parsePulsarUrl(new URL('pulsar://h?admin=ftp://h'), 'x', {}), UsageError)
  })
})

describe('pulsar adapter', () => {
  it('puts the §5 properties and the exact bytes on the wire (raw WebSocket consumer)', async (t) => {
    await withAdapter(t, async (adapter) => {
      const q = queue('wire')
      const envelope = make('urn:babel:orders:created', '{"order_id":9007199254740993,"amount":99.90}', {queue: q})
      const fields = fieldsOf(envelope)
      const poison = Buffer.from([0x7b, 0xff, 0x00, 0x0a])
      await adapter.publish(q, [{body: envelope.toBuffer(), fields, bypass: true}, out(poison)])
      const consumer = await rawConsumer(q, 'babelqueue', {subscriptionType: 'Shared'})
      try {
        const first = await consumer.next()
        assert.ok(Buffer.from(first.payload, 'base64').equals(envelope.toBuffer()))
        assert.deepEqual(first.properties, {
          'bq-job': 'urn:babel:orders:created',
          'bq-trace-id': fields.traceId,
          'bq-message-id': fields.id,
          'bq-schema-version': '1',
          'bq-source-lang': fields.lang,
          'bq-attempts': '0',
          'bq-replay-bypass': '1',
        })
        const second = await consumer.next()
        assert.ok(Buffer.from(second.payload, 'base64').equals(poison), 'a non-envelope body travels byte for byte')
        assert.deepEqual(second.properties ?? {}, {})
      } finally {
        consumer.close()
      }
    })
  })

  it('peeks without side effects: no new subscription, same cursor, same backlog', async (t) => {
    await withAdapter(t, async (adapter) => {
      const q = queue('peek')
      const bodies = numbered(6)
      await adapter.publish(q, bodies.map((body) => out(body)))
      // Give bq-redrive a real cursor: acknowledge messages 1 and 3 (a hole), release the rest.
      const session = await adapter.drain(q)
      const taken = await takeAll(session, 10)
      await session.ack([taken[1], taken[3]])
      await session.release([taken[0], taken[2], taken[4], taken[5]])
      await session.close()
      const cursorBefore = ((await adminJson(`${topicPath(q)}/internalStats`)).cursors as Record<string, Record<string, unknown>>)['bq-redrive']
      const subscriptionsBefore = await adminJson(`${topicPath(q)}/subscriptions`)
      assert.deepEqual([...(subscriptionsBefore as unknown as string[])].sort(), ['babelqueue', 'bq-redrive'])
      const expected = [0, 2, 4, 5].map((i) => bodies[i])
      assertBodies(await adapter.browse(q, {limit: 10}), expected)
      assertBodies(await adapter.browse(q, {offset: 1, limit: 2}), expected.slice(1, 3))
      assert.equal(await adapter.count(q), 4)
      const cursorAfter = ((await adminJson(`${topicPath(q)}/internalStats`)).cursors as Record<string, Record<string, unknown>>)['bq-redrive']
      for (const key of ['markDeletePosition', 'individuallyDeletedMessages', 'messagesConsumedCounter']) assert.deepEqual(cursorAfter[key], cursorBefore[key], key)
      const stats = (await adminJson(`${topicPath(q)}/stats?getPreciseBacklog=true`)).subscriptions as Record<string, {msgBacklog: number; isDurable: boolean}>
      // The only other subscription is the reader a paged browse keeps open: non-durable, gone at close.
      assert.deepEqual(Object.keys(stats).filter((name) => stats[name].isDurable).sort(), ['babelqueue', 'bq-redrive'])
      assert.equal(stats['bq-redrive'].msgBacklog, 4)
      assert.equal(stats.babelqueue.msgBacklog, 6)
      // A peek at a topic nobody created is an error (a topic exists apart from its messages) and creates nothing.
      const ghost = queue('ghost')
      await assert.rejects(adapter.browse(ghost, {limit: 5}), (error: Error) => error.name === 'QueueNotFoundError' && /does not exist/.test(error.message))
      assert.equal((await fetch(`${admin.origin}/admin/v2/${topicPath(ghost)}/stats`)).status, 404)
      await adapter.close()
      assert.deepEqual(await adminJson(`${topicPath(q)}/subscriptions`), subscriptionsBefore)
    })
  })

  it('delays delivery natively; a delayed message is neither counted nor shown until it is due', async (t) => {
    await withAdapter(t, async (adapter) => {
      const q = queue('delay')
      const envelope = make('urn:babel:orders:created', '{"order_id":1}', {queue: q})
      const consumer = await rawConsumer(q, 'babelqueue', {subscriptionType: 'Shared', subscriptionInitialPosition: 'Earliest'})
      try {
        const sent = Date.now()
        await adapter.publish(q, [{body: envelope.toBuffer(), fields: fieldsOf(envelope), delayMs: 3000}])
        assert.equal(await adapter.count(q), 0)
        assert.deepEqual(await adapter.browse(q, {limit: 5}), [])
        const delivered = await consumer.next(30_000)
        assert.ok(Date.now() - sent >= 2500, `delivered after ${Date.now() - sent} ms, before the 3 s delay`)
        assert.equal(delivered.properties['bq-delay'], '3000')
        assert.equal(await adapter.count(q), 1)
        consumer.send({messageId: delivered.messageId})
      } finally {
        consumer.close()
      }
    })
  })

  it('reports redeliveryCount as the native delivery count, reconciled as max(body, count)', async (t) => {
    if (!(await available(t))) return
    const q = queue('redeliver')
    const envelope = make('urn:babel:orders:created', '{"order_id":2}', {queue: q})
    const producer = await openBroker(pulsarUrl)
    await producer.publish(q, [{body: envelope.toBuffer(), fields: fieldsOf(envelope)}])
    await producer.close()
    // A worker on a Shared subscription fails the message twice (negative acknowledgements). Its
    // low priority makes the broker prefer bq's consumer once that joins.
    const worker = await rawConsumer(q, 'workers', {subscriptionType: 'Shared', subscriptionInitialPosition: 'Earliest', negativeAckRedeliveryDelay: '100', priorityLevel: '5'})
    const counts: number[] = []
    let held: RawMessage | undefined
    for (let i = 0; i < 3; i++) {
      held = await worker.next()
      counts.push(held.redeliveryCount)
      if (i < 2) worker.send({type: 'negativeAcknowledge', messageId: held.messageId})
    }
    assert.deepEqual(counts, [0, 1, 2])
    // bq joins the workers' subscription (the broker keeps the count only while the subscription
    // has a consumer), then the worker fails the message a third time.
    const url = new URL(pulsarUrl)
    url.searchParams.set('subscription', 'workers')
    url.searchParams.set('subscription_type', 'Shared')
    const adapter = createAdapter(url, redactUrl(url.href), {busyRetryMs: 2000})
    try {
      const session = await adapter.drain(q)
      worker.send({type: 'negativeAcknowledge', messageId: held!.messageId})
      const [message] = await session.next(1)
      worker.close()
      assert.ok(message !== undefined)
      assert.ok((message.native.deliveryCount ?? 0) >= 2, `deliveryCount ${message.native.deliveryCount}`)
      assert.equal(viewOf(message, pulsarBinding).attempts, message.native.deliveryCount, 'body attempts 0 < redeliveryCount')
      assert.equal(message.native.attempts, 0, 'bq-attempts carried as published')
      await session.release([message])
      await session.close()
    } finally {
      await adapter.close()
    }
  })

  it('reads a dead-letter-policy topic like any other, with the original topic as native dead-letter info', async (t) => {
    await withAdapter(t, async (adapter) => {
      const q = queue('dlp')
      const dlq = `${q}-workers-DLQ`
      const envelope = make('urn:babel:orders:created', '{"order_id":3}', {queue: q})
      await adapter.publish(q, [{body: envelope.toBuffer(), fields: fieldsOf(envelope)}])
      const worker = await rawConsumer(q, 'workers', {subscriptionType: 'Shared', subscriptionInitialPosition: 'Earliest', negativeAckRedeliveryDelay: '100', maxRedeliverCount: '1'})
      try {
        for (let i = 0; i < 2; i++) {
          const message = await worker.next()
          worker.send({type: 'negativeAcknowledge', messageId: message.messageId})
        }
        // The third delivery exceeds maxRedeliverCount: the client moves it to <topic>-<subscription>-DLQ.
        const deadline = Date.now() + 30_000
        // The DLQ topic is created when the first message is dead-lettered: until then it does not exist.
        const countOrNone = () => adapter.count(dlq).catch((error: Error) => (error.name === 'QueueNotFoundError' ? 0 : Promise.reject(error)))
        while ((await countOrNone()) < 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250))
      } finally {
        worker.close()
      }
      const [dead] = await adapter.browse(dlq, {limit: 5})
      assert.ok(dead !== undefined, `nothing arrived on ${dlq}`)
      assert.ok(dead.body.equals(envelope.toBuffer()))
      assert.deepEqual(dead.native.nativeDeadLetter, {reason: 'max_redeliver_count', originalQueue: q})
      const view = viewOf(dead, pulsarBinding)
      assert.equal(view.deadLetter?.originalQueue, q)
      assert.equal(view.deadLetter?.native, true)
    })
  })

  it('refuses what the broker refuses, with one-line errors: an oversized message, a busy drain, an unreachable endpoint', async (t) => {
    await withAdapter(t, async (adapter) => {
      const q = queue('refusals')
      // Above the broker's 5 MiB maxMessageSize, below the WebSocket frame limit.
      await assert.rejects(adapter.publish(q, [out(Buffer.alloc(5_500_000, 0x61))]), (error: unknown) => {
        assert.ok(error instanceof BqError)
        assert.match(error.message, /refused|frame/)
        assert.ok(!error.message.includes('\n'))
        return true
      })
      await adapter.publish(q, [out(Buffer.from('{"ok":1}'))])
      const first = await adapter.drain(q)
      const second = createAdapter(new URL(pulsarUrl), pulsarUrl, {busyRetryMs: 500})
      try {
        await assert.rejects(second.drain(q), /being drained by another consumer of subscription bq-redrive/)
      } finally {
        await second.close()
        await first.close()
      }
    })
    const dead = await openBroker(`pulsar://127.0.0.1:6650?admin=http://127.0.0.1:${await closedPort()}&token=hunter2-secret`)
    await assert.rejects(dead.count('orders'), (error: unknown) => {
      assert.ok(error instanceof ConnectionError)
      assert.ok(!error.message.includes('hunter2-secret'))
      assert.match(error.message, /unreachable \(connection refused\)/)
      return true
    })
    await dead.close()
  })
})
