/**
 * The Artemis adapter against a real broker (BQ_TEST_ARTEMIS_URL, default
 * artemis://bq:bq@127.0.0.1:5673): what goes on the wire, what a browse leaves behind, scheduled
 * delivery, per-message settlement, the broker's own dead-letter address, and connection failures.
 * A raw rhea client (support.ts) checks what the broker really holds. Every queue a test
 * creates is destroyed at the end.
 *
 * Every assert.ok has a message: a failing bare assert.ok makes Node re-read the call site from
 * the file, which goes wrong on tsx-transformed TypeScript.
 */
import assert from 'node:assert/strict'
import {after, describe, it, type TestContext} from 'node:test'

import type {BrokerAdapter, OutgoingMessage, ReservedMessage} from '../../../src/lib/brokers/adapter.js'
import {createAdapter} from '../../../src/lib/brokers/artemis/adapter.js'
import type {ArtemisConnection} from '../../../src/lib/brokers/artemis/connection.js'
import type {ArtemisDrainSession} from '../../../src/lib/brokers/artemis/drain.js'
import {redactUrl} from '../../../src/lib/brokers/shared/redact.js'
import {openBroker} from '../../../src/lib/brokers/registry.js'
import {annotate, decode, fieldsOf, make} from '../../../src/lib/envelope/index.js'
import type {EnvelopeFields} from '../../../src/lib/envelope/fields.js'
import {AuthError, ConnectionError, ExitCode} from '../../../src/lib/errors.js'
import {parseSelector} from '../../../src/lib/ops/match.js'
import {redrive} from '../../../src/lib/ops/redrive.js'
import {requireBroker, uniqueQueue} from '../../support/brokers.js'
import {RawClient, destroyQueues, queueAttribute, settle, withManagement} from './support.js'
import {assertBodies, numbered, out, takeAll} from '../../suites/contract-suite.js'

const url = process.env.BQ_TEST_ARTEMIS_URL ?? 'artemis://bq:bq@127.0.0.1:5673'
const parsed = new URL(url)
const available = (t: TestContext) => requireBroker(t, 'Artemis', parsed.hostname, Number(parsed.port || 5672))

const used: string[] = []
const queue = (label: string) => {
  const q = uniqueQueue(`artemis-${label}`)
  used.push(q)
  return q
}

after(async () => {
  if (used.length > 0) await destroyQueues(url, used).catch(() => undefined)
})

function fieldsFor(i: number, q: string): EnvelopeFields {
  return {
    job: 'urn:babel:orders:created',
    traceId: `7b3f9c2a-e41d-4f88-9b2a-${String(i).padStart(12, '0')}`,
    id: `f1e2d3c4-b5a6-4789-90ab-${String(i).padStart(12, '0')}`,
    queue: q,
    lang: 'php',
    schemaVersion: 1,
    createdAt: 1749132727000 + i,
    attempts: 2,
  }
}

/** A canonical envelope whose bytes a JSON round trip would change. */
function envelopeFor(i: number, q: string): OutgoingMessage {
  const f = fieldsFor(i, q)
  const body = Buffer.from(
    `{"job":"${f.job}","trace_id":"${f.traceId}","data":{"order_id":9007199254740993,"n":${i},"amount":99.90,"name":"Jos\\u00e9"},` +
      `"meta":{"id":"${f.id}","queue":"${q}","lang":"php","schema_version":1,"created_at":${f.createdAt}},"attempts":${f.attempts}}`,
  )
  return {body, fields: f}
}

async function withAdapter(t: TestContext, fn: (adapter: BrokerAdapter) => Promise<void>, open: () => Promise<BrokerAdapter> = () => openBroker(url)): Promise<void> {
  if (!(await available(t))) return
  const adapter = await open()
  try {
    await fn(adapter)
  } finally {
    await adapter.close()
  }
}

async function withRaw<T>(fn: (raw: RawClient) => Promise<T>): Promise<T> {
  const raw = await RawClient.open(url)
  try {
    return await fn(raw)
  } finally {
    raw.close()
  }
}

function bodyOf(body: unknown): Buffer {
  const section = body as {typecode?: number; content?: Buffer}
  assert.equal(section.typecode, 0x75, 'the body is an AMQP data section')
  assert.ok(Buffer.isBuffer(section.content), 'the data section holds bytes')
  return section.content as Buffer
}

describe('artemis adapter', () => {
  it('puts the §7 projection on the wire: x-opt-jms-type, correlation-id, creation-time, bq_ properties, exact bytes', async (t) => {
    await withAdapter(t, async (adapter) => {
      const q = queue('wire')
      const poison = Buffer.from('{"broken": \n')
      const envelope = envelopeFor(1, q)
      await adapter.publish(q, [envelope, {...envelopeFor(2, q), bypass: true}, {body: poison, fields: null}])
      await withRaw(async (raw) => {
        const receiver = await raw.receiver(q)
        const got = await receiver.take(10)
        assert.equal(got.length, 3)
        const [first, second, third] = got.map((d) => d.message)
        assert.deepEqual(bodyOf(first.body), envelope.body)
        assert.equal(first.durable, true)
        assert.equal(first.content_type, 'application/json')
        assert.equal(first.message_annotations?.['x-opt-jms-type'], 'urn:babel:orders:created')
        assert.equal(first.correlation_id, envelope.fields!.traceId)
        assert.equal(first.message_id, envelope.fields!.id)
        assert.ok(first.creation_time instanceof Date, 'creation-time is an AMQP timestamp')
        assert.equal((first.creation_time as Date).getTime(), envelope.fields!.createdAt)
        assert.deepEqual(first.application_properties, {bq_schema_version: '1', bq_source_lang: 'php', bq_attempts: '2', bq_app_id: 'babelqueue'})
        assert.equal(second.application_properties?.['bq-replay-bypass'], '1')
        // A poison body goes as its bytes, with nothing projected.
        assert.deepEqual(bodyOf(third.body), poison)
        assert.equal(third.application_properties, undefined)
        assert.equal(third.message_annotations, undefined)
        for (const d of got) d.delivery.release()
        await settle()
        await receiver.close()
      })
      // The adapter reads the same back: headers JSON-friendly, native fields from the projection.
      const [seen] = await adapter.browse(q, {limit: 1})
      assert.deepEqual(seen.body, envelope.body)
      assert.deepEqual(seen.native, {job: 'urn:babel:orders:created', traceId: envelope.fields!.traceId, id: envelope.fields!.id, lang: 'php', schemaVersion: 1, createdAt: envelope.fields!.createdAt, attempts: 2})
      assert.equal((seen.headers.message_annotations as Record<string, unknown>)['x-opt-jms-type'], 'urn:babel:orders:created')
      assert.equal(seen.headers.creation_time, new Date(envelope.fields!.createdAt).toISOString())
      assert.equal(seen.headers.body_section, 'data')
      assert.doesNotThrow(() => JSON.stringify(seen.headers))
    })
  })

  it('browses without raising a delivery count or changing the order', async (t) => {
    await withAdapter(t, async (adapter) => {
      const q = queue('browse-count')
      const bodies = numbered(6)
      await adapter.publish(q, bodies.map((body) => out(body)))
      for (let i = 0; i < 3; i++) assertBodies(await adapter.browse(q, {limit: 10}), bodies)
      assertBodies(await adapter.browse(q, {offset: 2, limit: 2}), bodies.slice(2, 4))
      assert.equal(await adapter.count(q), 6)
      assert.equal(await queueAttribute(url, q, 'deliveringCount'), 0)
      // A consumer sees first deliveries: delivery-count absent (0), original order.
      await withRaw(async (raw) => {
        const receiver = await raw.receiver(q)
        const got = await receiver.take(10)
        assert.deepEqual(got.map((d) => bodyOf(d.message.body)), bodies)
        assert.deepEqual(got.map((d) => d.message.delivery_count ?? 0), [0, 0, 0, 0, 0, 0])
        for (const d of got) d.delivery.release()
        await settle()
        await receiver.close()
      })
    })
  })

  it('reports the delivery count a consumer would see, from a browse and from a drain', async (t) => {
    await withAdapter(t, async (adapter) => {
      const q = queue('delivery-count')
      await adapter.publish(q, [envelopeFor(0, q)])
      // Three failed deliveries (modified with delivery-failed, as a failing consumer would).
      await withRaw(async (raw) => {
        for (let i = 0; i < 3; i++) {
          const receiver = await raw.receiver(q)
          const [d] = await receiver.take(1)
          d.delivery.modified({delivery_failed: true})
          await settle()
          await receiver.close()
        }
      })
      const [browsed] = await adapter.browse(q, {limit: 1})
      // Artemis stamps the browsed copy with 2; a consumer receives 3.
      assert.equal(browsed.headers.delivery_count, 2)
      assert.equal(browsed.native.deliveryCount, 3)
      const session = await adapter.drain(q)
      const [drained] = await session.next(1)
      assert.equal(drained.native.deliveryCount, 3)
      assert.equal(drained.headers.delivery_count, 3)
      await session.close()
      // Released at close: the count is unchanged.
      const [again] = await adapter.browse(q, {limit: 1})
      assert.equal(again.native.deliveryCount, 3)
    })
  })

  it('holds a scheduled message (x-opt-delivery-time) out of sight until it is due', async (t) => {
    await withAdapter(t, async (adapter) => {
      const q = queue('delay')
      const before = Date.now()
      await adapter.publish(q, [{...envelopeFor(0, q), delayMs: 1500}, {body: Buffer.from('poison'), fields: null, delayMs: 1500}])
      assert.equal(await adapter.count(q), 0)
      assert.deepEqual(await adapter.browse(q, {limit: 10}), [])
      assert.equal(await queueAttribute(url, q, 'scheduledCount'), 2)
      const session = await adapter.drain(q)
      assert.deepEqual(await session.next(10), [])
      await session.close()
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, before + 1700 - Date.now())))
      let found = await adapter.browse(q, {limit: 10})
      for (let i = 0; found.length < 2 && i < 50; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        found = await adapter.browse(q, {limit: 10})
      }
      assert.equal(found.length, 2)
      const annotations = found[0].headers.message_annotations as Record<string, unknown>
      const due = annotations['x-opt-delivery-time'] as number
      assert.ok(due >= before + 1500 && due <= Date.now(), `delivery time ${due} is 1.5 s after publishing`)
      assert.equal((found[0].headers.application_properties as Record<string, unknown>).bq_delay, '1500')
      assert.equal(await adapter.count(q), 2)
    })
  })

  it('settles per message: acked ones leave, a drain that dies before accepting leaves the rest on the queue', async (t) => {
    // The adapter itself, not openBroker's time-bounded wrapper: the test reaches into its session.
    await withAdapter(t, async (adapter) => {
      const q = queue('settle')
      const bodies = numbered(6)
      await adapter.publish(q, bodies.map((body) => out(body)))
      const session = await adapter.drain(q)
      const taken = await session.next(4)
      await session.ack([taken[1]])
      await session.release([taken[2]])
      // The crash: the drain's connection drops with no AMQP goodbye (as with a reset).
      const connection = (session as unknown as {init: {connection: ArtemisConnection}}).init.connection
      ;(connection.connection as {socket?: {destroy(error?: Error): void}}).socket?.destroy(new Error('simulated crash'))
      await assert.rejects(session.next(1), ConnectionError)
      const expected = [0, 2, 3, 4, 5].map((i) => bodies[i])
      let count = await adapter.count(q)
      for (let i = 0; count !== expected.length && i < 100; i++) {
        await new Promise((resolve) => setTimeout(resolve, 100))
        count = await adapter.count(q)
      }
      assert.equal(count, expected.length)
      assert.equal(await adapter.recover(q), 0)
      assertBodies(await adapter.browse(q, {limit: 10}), expected)
      await session.close()
      // Artemis may count the crash as a failed delivery of what the dead drain held (seen both
      // ways on 2.40.0, depending on timing); never more than one, never for the others.
      const after = await withRaw(async (raw) => {
        const receiver = await raw.receiver(q)
        const got = await receiver.take(10)
        for (const d of got) d.delivery.release()
        await settle()
        await receiver.close()
        return got.map((d) => d.message.delivery_count ?? 0)
      })
      assert.ok(after.slice(0, 3).every((count) => count === 0 || count === 1), `crashed deliveries counted at most once: ${after}`)
      assert.deepEqual(after.slice(3), [0, 0])
    }, () => createAdapter(new URL(url), redactUrl(url)))
  })

  it('keeps a release apart from an ack of the neighbouring delivery', async (t) => {
    await withAdapter(t, async (adapter) => {
      const q = queue('neighbours')
      const bodies = numbered(4)
      await adapter.publish(q, bodies.map((body) => out(body)))
      const session = await adapter.drain(q)
      const taken = await session.next(4)
      // Adjacent deliveries with different fates, settled together: rhea would merge them into
      // one disposition range if the adapter let it.
      await Promise.all([session.ack([taken[0]]), session.release([taken[1]]), session.ack([taken[2]])])
      await session.close()
      assertBodies(await adapter.browse(q, {limit: 10}), [bodies[1], bodies[3]])
    })
  })

  it('returns held releases early when they would block the window, each still seen once, in place', async (t) => {
    const open = () => createAdapter(new URL(url), redactUrl(url), {drain: {sessionBuffer: 64, window: 16}})
    await withAdapter(t, async (adapter) => {
      const q = queue('held')
      const bodies = numbered(200)
      await adapter.publish(q, bodies.map((body) => out(body)))
      const session = await adapter.drain(q)
      const seen: ReservedMessage[] = []
      for (;;) {
        const batch = await session.next(10)
        if (batch.length === 0) break
        seen.push(...batch)
        // Keep every tenth message (released, so held), move the rest.
        await session.release(batch.filter((_, i) => i === 0))
        await session.ack(batch.filter((_, i) => i !== 0))
      }
      assert.ok((session as ArtemisDrainSession).heldCount < 20, 'some held releases went back before close')
      await session.close()
      assert.equal(seen.length, 200)
      assert.equal(new Set(seen.map((m) => m.body.toString())).size, 200, 'no message was handed out twice')
      const kept = bodies.filter((_, i) => i % 10 === 0)
      assertBodies(await adapter.browse(q, {limit: 100}), kept)
      const counts = await withRaw(async (raw) => {
        const receiver = await raw.receiver(q)
        const got = await receiver.take(100)
        for (const d of got) d.delivery.release()
        await settle()
        await receiver.close()
        return got.map((d) => d.message.delivery_count ?? 0)
      })
      assert.deepEqual(counts, kept.map(() => 0), 'returned without a failed delivery counted')
    }, open)
  })

  it('reads the broker dead-letter address like a queue and redrives to the original queue', async (t) => {
    await withAdapter(t, async (adapter) => {
      const q = queue('native-dlq')
      // A plain envelope (no dead_letter block), as a consumer that failed it would have left it.
      const plain = make('urn:babel:orders:created', '{"order_id":8}', {queue: q})
      await adapter.publish(q, [{body: plain.toBuffer(), fields: fieldsOf(plain)}])
      const settings = await withManagement(url, (management) => management.invoke('broker', 'getAddressSettingsAsJSON', [q]))
      const {deadLetterAddress, maxDeliveryAttempts} = JSON.parse(String(settings.value)) as {deadLetterAddress: string; maxDeliveryAttempts?: number}
      const attempts = maxDeliveryAttempts ?? 10
      assert.equal(deadLetterAddress, 'DLQ')
      await withRaw(async (raw) => {
        for (let i = 0; i < attempts; i++) {
          const receiver = await raw.receiver(q)
          const got = await receiver.take(1)
          assert.equal(got.length, 1, `delivery ${i + 1} of ${attempts}`)
          got[0].delivery.modified({delivery_failed: true})
          await settle()
          await receiver.close()
        }
      })
      assert.equal(await adapter.count(q), 0)
      const mine = (await adapter.browse('DLQ', {limit: 10_000})).filter((m) => m.native.id === plain.id)
      assert.equal(mine.length, 1, 'the message is on the dead-letter address')
      assert.deepEqual(mine[0].body, plain.toBuffer())
      assert.deepEqual(mine[0].native.nativeDeadLetter, {reason: 'delivery_failed', originalQueue: q})
      // Redrive from DLQ, selecting this queue's messages: back to the original queue.
      const report = await redrive({source: adapter, dlq: 'DLQ', selectors: [parseSelector(`original_queue=${q}`)], max: 0, bypass: false, dryRun: false})
      assert.equal(report.counts.redriven, 1)
      assert.equal(report.counts.failed, 0)
      const back = await adapter.browse(q, {limit: 10})
      assert.equal(back.length, 1)
      assert.equal(decode(back[0].body).id, plain.id)
      assert.equal((await adapter.browse('DLQ', {limit: 10_000})).filter((m) => m.native.id === plain.id).length, 0)
    })
  })

  it('counts, browses and drains without the manage permission (counting by browsing)', async (t) => {
    if (!(await available(t))) return
    // A user whose role may use bqtest-limited.* addresses but not the management address.
    const user = 'bqlimited'
    const match = 'bqtest-limited.#'
    await withManagement(url, async (management) => {
      await management.invoke('broker', 'addUser', [user, user, user, true])
      // send, consume, create/delete durable, create/delete non-durable, manage, browse, create/delete address
      await management.invoke('broker', 'addSecuritySettings', [match, user, user, user, user, user, user, '', user, user, user])
    })
    const limitedUrl = new URL(url)
    limitedUrl.username = user
    limitedUrl.password = user
    const q = `bqtest-limited.${uniqueQueue('nomanage')}`
    used.push(q)
    try {
      await withAdapter(t, async (adapter) => {
        const bodies = numbered(5)
        await adapter.publish(q, bodies.map((body) => out(body)))
        assert.equal(await adapter.count(q), 5)
        assertBodies(await adapter.browse(q, {offset: 1, limit: 3}), bodies.slice(1, 4))
        const session = await adapter.drain(q, {max: 3})
        const taken = await takeAll(session, 2)
        assertBodies(taken, bodies.slice(0, 3))
        await session.ack(taken.slice(0, 2))
        await session.close()
        assert.equal(await adapter.count(q), 3)
        assertBodies(await adapter.browse(q, {limit: 10}), bodies.slice(2))
      }, () => openBroker(limitedUrl.href))
    } finally {
      await withManagement(url, async (management) => {
        await management.invoke('broker', 'removeSecuritySettings', [match])
        await management.invoke('broker', 'removeUser', [user])
      })
    }
  })

  it('fails fast with a one-line, redacted ConnectionError (exit 4) when the broker is unreachable', async () => {
    const started = Date.now()
    await assert.rejects(openBroker('artemis://bq:hunter2-secret@127.0.0.1:5999'), (error: unknown) => {
      assert.ok(error instanceof ConnectionError, 'a ConnectionError')
      assert.equal(error.exitCode, ExitCode.connection)
      assert.equal(error.message, 'cannot connect to Artemis at artemis://bq:***@127.0.0.1:5999: connection refused')
      return true
    })
    assert.ok(Date.now() - started < 3000, 'fails within seconds')
  })

  it('reports refused credentials as an AuthError (exit 6) and a TLS handshake with a plain port as a ConnectionError, without the password', async (t) => {
    if (!(await available(t))) return
    const bad = new URL(url)
    bad.password = 'hunter2-secret'
    await assert.rejects(openBroker(bad.href), (error: unknown) => {
      assert.ok(error instanceof AuthError, 'an AuthError')
      assert.equal(error.exitCode, ExitCode.auth)
      assert.match(error.message, /refused the login as user "bq": wrong user name or password/)
      assert.ok(!error.message.includes('hunter2-secret'), error.message)
      assert.ok(!error.message.includes('\n'), 'one line')
      return true
    })
    const tls = new URL(url.replace(/^artemis:/, 'artemis+ssl:'))
    await assert.rejects(createAdapter(tls, redactUrl(tls.href), {connectTimeoutMs: 5000}), (error: unknown) => {
      assert.ok(error instanceof ConnectionError, 'a ConnectionError')
      assert.ok(!error.message.includes('\n'), 'one line')
      return true
    })
  })

  it('refuses URL parameters and paths it does not know', async () => {
    await assert.rejects(openBroker('artemis://bq:bq@127.0.0.1:5673?vhost=x'), /unknown parameter "vhost"/)
    await assert.rejects(openBroker('artemis://bq:bq@127.0.0.1:5673?ca=/tmp/ca.pem'), /ca= needs TLS: use artemis\+ssl:\/\//)
    await assert.rejects(openBroker('artemis://bq:bq@127.0.0.1:5673/some/path'), /has a path/)
  })

  it('drains a DLQ of mixed bodies in a redrive, leaving poison and unselected messages in order', async (t) => {
    await withAdapter(t, async (adapter) => {
      const q = queue('redrive')
      const dlq = `${q}.dlq`
      const dead = Array.from({length: 30}, (_, i) => annotate(make('urn:babel:orders:created', `{"order_id":${i}}`, {queue: q}), {reason: i % 3 === 0 ? 'unknown_urn' : 'failed', originalQueue: q, error: 'boom', failedAt: 1749132730000, attempts: 3}))
      const outgoing: OutgoingMessage[] = dead.map((e) => ({body: e.toBuffer(), fields: fieldsOf(e)}))
      outgoing.splice(5, 0, {body: Buffer.from('not json'), fields: null})
      await adapter.publish(dlq, outgoing)
      const report = await redrive({source: adapter, dlq, selectors: [parseSelector('reason=failed')], max: 0, bypass: true, dryRun: false, batchSize: 7})
      assert.deepEqual(report.counts, {examined: 31, redriven: 20, would_redrive: 0, skipped: 10, poison: 1, failed: 0})
      const left = await adapter.browse(dlq, {limit: 100})
      assertBodies(left, outgoing.filter((m) => m.fields === null || decode(m.body).deadLetter?.reason === 'unknown_urn').map((m) => m.body))
      const moved = await takeAll(await adapter.drain(q), 100)
      assert.equal(moved.length, 20)
      assert.ok(moved.every((m) => m.native.replayBypass === true && m.native.attempts === 0), 'copies carry bq-replay-bypass and bq_attempts 0')
    })
  })
})
