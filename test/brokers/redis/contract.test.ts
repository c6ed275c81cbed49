import assert from 'node:assert/strict'
import {after, describe, it, type TestContext} from 'node:test'
import {Redis} from 'ioredis'

import type {BrokerAdapter, ReservedMessage} from '../../../src/lib/brokers/adapter.js'
import {createRedisAdapter} from '../../../src/lib/brokers/redis/adapter.js'
import {openBroker, redactUrl} from '../../../src/lib/brokers/registry.js'
import {annotate, make} from '../../../src/lib/envelope/index.js'
import {AuthError, BqError, ConnectionError, ExitCode} from '../../../src/lib/errors.js'
import {redrive} from '../../../src/lib/ops/redrive.js'
import {requireBroker, uniqueQueue} from '../../support/brokers.js'
import {assertBodies, brokerContractSuite, numbered, out, takeAll} from '../../suites/contract-suite.js'
import {runFixture} from '../../suites/fixtures/run-fixture.js'

const url = process.env.BQ_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0'
const parsed = new URL(url)
const host = parsed.hostname
const port = Number(parsed.port || 6379)

/** Redis's own view, for checking keys and cleaning up. */
let raw: Redis | undefined
function rawClient(): Redis {
  raw ??= new Redis(url, {lazyConnect: false, maxRetriesPerRequest: 1})
  return raw
}

/** Every key a test may have created for these queues (any prefix). */
async function cleanup(queues: string[]): Promise<void> {
  const client = rawClient()
  for (const queue of queues) {
    const keys = await client.keys(`*${queue}*`)
    if (keys.length > 0) await client.del(...keys)
  }
}

const available = (t: TestContext) => requireBroker(t, 'Redis', host, port)
const used: string[] = []
const queue = (label: string) => {
  const q = uniqueQueue(`redis-${label}`)
  used.push(q)
  return q
}

after(async () => {
  if (raw === undefined) return
  await cleanup(used)
  // Anything else our tests left (a failed run's keys) also goes.
  const stray = await raw.keys('*bqtest-redis*')
  if (stray.length > 0) await raw.del(...stray)
  await raw.quit()
})

brokerContractSuite('redis', {
  open: () => openBroker(url),
  available,
  cleanup,
  crashDrain: async (q, take, release) => {
    await runFixture('crash-drain.ts', [url, q, String(take), String(release)])
  },
  secrets: parsed.password === '' ? [] : [parsed.password],
})

describe('redis adapter', () => {
  it('uses the key prefix for the list and its processing list', async (t) => {
    if (!(await available(t))) return
    const withPrefix = new URL(url)
    withPrefix.searchParams.set('prefix', 'queues:')
    const adapter = await openBroker(withPrefix.href)
    try {
      const q = queue('prefix')
      const bodies = numbered(3)
      await adapter.publish(q, bodies.map((body) => out(body)))
      const client = rawClient()
      assert.deepEqual(await client.lrangeBuffer(`queues:${q}`, 0, -1), bodies)
      assert.equal(await client.exists(q), 0)
      const session = await adapter.drain(q)
      const taken = await session.next(2)
      assert.deepEqual(await client.lrangeBuffer(`queues:${q}:processing`, 0, -1), bodies.slice(0, 2))
      assert.equal(await client.exists(`queues:${q}:bq-lock`), 1)
      await session.release(taken.slice(0, 1))
      assert.deepEqual(await client.lrangeBuffer(`queues:${q}:bq-held`, 0, -1), bodies.slice(0, 1))
      await session.close()
      assert.deepEqual(await client.lrangeBuffer(`queues:${q}`, 0, -1), bodies)
      assert.equal(await client.exists(`queues:${q}:processing`, `queues:${q}:bq-held`, `queues:${q}:bq-lock`), 0)
    } finally {
      await adapter.close()
    }
  })

  it('refuses a second drain while the lock is held, naming the holder', async (t) => {
    if (!(await available(t))) return
    const first = await openBroker(url)
    const second = await openBroker(url)
    try {
      const q = queue('lock')
      await first.publish(q, numbered(2).map((body) => out(body)))
      const session = await first.drain(q)
      for (const attempt of [() => second.drain(q), () => second.recover(q), () => first.drain(q)]) {
        await assert.rejects(attempt(), (error: unknown) => {
          assert.ok(error instanceof BqError)
          assert.equal(error.exitCode, ExitCode.usage)
          assert.match(error.message, new RegExp(`is being drained by pid ${process.pid} on host .*expires in \\d+s`))
          return true
        })
      }
      await session.close()
      const again = await second.drain(q)
      assert.equal((await takeAll(again, 10)).length, 2)
      await again.close()
    } finally {
      await first.close()
      await second.close()
    }
  })

  it('refuses a lock it cannot identify', async (t) => {
    if (!(await available(t))) return
    const adapter = await openBroker(url)
    try {
      const q = queue('foreign-lock')
      await rawClient().set(`${q}:bq-lock`, 'someone else', 'PX', 10_000)
      await assert.rejects(adapter.drain(q), /being drained by another client/)
    } finally {
      await adapter.close()
    }
  })

  it('recovers after the lock of a run whose connection died expires', async (t) => {
    if (!(await available(t))) return
    const ttl = 600
    const q = queue('killed')
    const bodies = numbered(5)
    const name = `bq-test-doomed-${process.pid}`
    const doomed = await createRedisAdapter(new URL(url), redactUrl(url), {lockTtlMs: ttl, connectionName: name})
    const survivor = await createRedisAdapter(new URL(url), redactUrl(url), {lockTtlMs: ttl})
    try {
      await doomed.publish(q, bodies.map((body) => out(body)))
      const session = await doomed.drain(q)
      const taken = await session.next(3)
      await session.release(taken.slice(0, 1))
      // Kill the drain's connection from the server side: its lock stops being refreshed.
      const list = (await rawClient().client('LIST')) as string
      const line = list.split('\n').find((entry) => entry.includes(` name=${name} `))
      const id = /(?:^|\s)id=(\d+)/.exec(line ?? '')?.[1]
      assert.ok(id !== undefined, 'found the drain connection')
      await rawClient().client('KILL', 'ID', id)
      await assert.rejects(session.next(1), ConnectionError)
      assert.equal(await survivor.count(q), 2)
      await assert.rejects(survivor.recover(q), /being drained/)
      await new Promise((resolve) => setTimeout(resolve, ttl + 200))
      assert.equal(await survivor.recover(q), 3)
      assertBodies(await survivor.browse(q, {limit: 10}), bodies)
      await assert.rejects(session.close(), ConnectionError)
    } finally {
      await doomed.close().catch(() => undefined)
      await survivor.close()
    }
  })

  it('refuses delayed publishing and unknown URL parameters', async (t) => {
    if (!(await available(t))) return
    const adapter = await openBroker(url)
    try {
      await assert.rejects(adapter.publish(queue('delay'), [{...out(Buffer.from('{}')), delayMs: 1000}]), /no delayed delivery/)
    } finally {
      await adapter.close()
    }
    const typo = new URL(url)
    typo.searchParams.set('prefx', 'queues:')
    await assert.rejects(openBroker(typo.href), /unknown parameter "prefx"/)
  })

  it('fails to connect with a one-line, redacted ConnectionError', async () => {
    await assert.rejects(openBroker('redis://:hunter2-secret@127.0.0.1:6390/0'), (error: unknown) => {
      assert.ok(error instanceof ConnectionError)
      assert.equal(error.exitCode, ExitCode.connection)
      assert.equal(error.message, 'cannot connect to redis://:***@127.0.0.1:6390/0: connection refused')
      return true
    })
  })

  it('reports refused credentials as exit 6 without echoing them', async (t) => {
    if (!(await available(t))) return
    const bad = new URL(url)
    bad.username = 'bq-no-such-user'
    bad.password = 'hunter2-secret'
    await assert.rejects(openBroker(bad.href), (error: unknown) => {
      assert.ok(error instanceof AuthError)
      assert.equal(error.exitCode, ExitCode.auth)
      assert.ok(!error.message.includes('hunter2-secret'), error.message)
      assert.match(error.message, /refused the credentials of user "bq-no-such-user"/)
      assert.ok(!error.message.includes('\n'))
      return true
    })
  })

  it('keeps bodies that differ only in bytes apart and equal bodies interchangeable', async (t) => {
    if (!(await available(t))) return
    const adapter: BrokerAdapter = await openBroker(url)
    try {
      const q = queue('dupes')
      const same = Buffer.from('{"same":1}')
      const bodies = [same, Buffer.from([0xc3, 0xa9]), same, Buffer.from([0xe9]), same]
      await adapter.publish(q, bodies.map((body) => out(body)))
      const session = await adapter.drain(q)
      const taken = await session.next(5)
      assertBodies(taken, bodies)
      await session.ack([taken[2]])
      await session.release([taken[4], taken[0]])
      await session.close()
      assertBodies(await adapter.browse(q, {limit: 10}), [same, bodies[1], bodies[3], same])
    } finally {
      await adapter.close()
    }
  })
})

describe('redis drain read-ahead', () => {
  /** Polls until `check` holds: a read-ahead is sent when next() returns and lands a moment later. */
  async function eventually(check: () => Promise<boolean>, what: string): Promise<void> {
    for (let i = 0; i < 200; i++) {
      if (await check()) return
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    assert.fail(`timed out waiting until ${what}`)
  }

  it('reads the next batch ahead only once the caller streams, and returns it in place at close', async (t) => {
    if (!(await available(t))) return
    const adapter = await openBroker(url)
    try {
      const q = queue('ahead-close')
      const bodies = numbered(10)
      await adapter.publish(q, bodies.map((body) => out(body)))
      const client = rawClient()
      const session = await adapter.drain(q)
      const first = await session.next(3)
      assertBodies(first, bodies.slice(0, 3))
      // A first call takes what it asked for and nothing more.
      await new Promise((resolve) => setTimeout(resolve, 50))
      assert.equal(await client.llen(`${q}:processing`), 3)
      const second = await session.next(3)
      assertBodies(second, bodies.slice(3, 6))
      // Streaming: the following batch is reserved into processing behind the ones handed out.
      await eventually(async () => (await client.llen(`${q}:processing`)) === 9, 'the read-ahead batch is in processing')
      assert.deepEqual(await client.lrangeBuffer(`${q}:processing`, 0, -1), bodies.slice(0, 9))
      assert.deepEqual(await client.lrangeBuffer(q, 0, -1), bodies.slice(9))
      await session.ack(first.slice(0, 2))
      await session.release([second[1]])
      await session.close()
      // Everything not acked is back at the head in its original order, read-ahead included.
      assert.deepEqual(await client.lrangeBuffer(q, 0, -1), bodies.slice(2))
      assert.equal(await client.exists(`${q}:processing`, `${q}:bq-held`, `${q}:bq-lock`), 0)
    } finally {
      await adapter.close()
    }
  })

  it('leaves the queue exactly as it was when the caller closes after streaming a batch', async (t) => {
    if (!(await available(t))) return
    const adapter = await openBroker(url)
    try {
      const q = queue('ahead-untouched')
      const bodies = numbered(25)
      await adapter.publish(q, bodies.map((body) => out(body)))
      const session = await adapter.drain(q)
      assertBodies(await session.next(5), bodies.slice(0, 5))
      assertBodies(await session.next(5), bodies.slice(5, 10))
      await session.close()
      const client = rawClient()
      assert.deepEqual(await client.lrangeBuffer(q, 0, -1), bodies)
      assert.equal(await client.exists(`${q}:processing`, `${q}:bq-held`, `${q}:bq-lock`), 0)
    } finally {
      await adapter.close()
    }
  })

  it('a read-ahead that fails fails the call that reaches it, and loses nothing', async (t) => {
    if (!(await available(t))) return
    const adapter = await openBroker(url)
    const other = await openBroker(url)
    try {
      const q = queue('ahead-fail-lock')
      const bodies = numbered(12)
      await adapter.publish(q, bodies.map((body) => out(body)))
      const session = await adapter.drain(q)
      assertBodies(await session.next(2), bodies.slice(0, 2))
      // The second call streams: a read-ahead of the next batch goes out before it returns.
      assertBodies(await session.next(2), bodies.slice(2, 4))
      await eventually(async () => (await rawClient().llen(`${q}:processing`)) === 6, 'the read-ahead batch is in processing')
      // The lock goes away: the read-ahead the next call starts is refused by the fence.
      await rawClient().del(`${q}:bq-lock`)
      assertBodies(await session.next(2), bodies.slice(4, 6))
      await assert.rejects(session.next(2), /drain lock was lost/)
      await assert.rejects(session.close(), /drain lock was lost/)
      // Nothing was lost: recovery puts every reservation back, in order.
      assert.equal(await other.recover(q), 6)
      assertBodies(await other.browse(q, {limit: 20}), bodies)
    } finally {
      await adapter.close().catch(() => undefined)
      await other.close()
    }
  })

  it('never reserves past max, read-ahead included', async (t) => {
    if (!(await available(t))) return
    const adapter = await openBroker(url)
    try {
      const q = queue('ahead-max')
      const bodies = numbered(10)
      await adapter.publish(q, bodies.map((body) => out(body)))
      const client = rawClient()
      const session = await adapter.drain(q, {max: 7})
      const taken: ReservedMessage[] = []
      for (;;) {
        const batch = await session.next(3)
        // Let any read-ahead land before looking.
        await new Promise((resolve) => setTimeout(resolve, 30))
        assert.ok((await client.llen(`${q}:processing`)) <= 7, 'processing never holds more than max')
        assert.ok((await client.llen(q)) >= 3, 'the messages past max are never taken')
        if (batch.length === 0) break
        taken.push(...batch)
        await session.ack(batch)
      }
      assertBodies(taken, bodies.slice(0, 7))
      await session.close()
      assert.deepEqual(await client.lrangeBuffer(q, 0, -1), bodies.slice(7))
      assert.equal(await client.exists(`${q}:processing`, `${q}:bq-held`, `${q}:bq-lock`), 0)
    } finally {
      await adapter.close()
    }
  })

  it('a redrive whose target fails stops after that batch; the batch read and planned meanwhile goes back unexamined', async (t) => {
    if (!(await available(t))) return
    const adapter = await openBroker(url)
    try {
      const dlq = queue('ahead-fail')
      const good = queue('ahead-good')
      const bad = queue('ahead-bad')
      const client = rawClient()
      // Not a list: a move there fails before it changes anything.
      await client.set(bad, 'not a list')
      const dead = (target: string, i: number) =>
        annotate(make('urn:babel:orders:created', `{"n":${i}}`, {queue: target}), {reason: 'failed', originalQueue: target, failedAt: 1749132730000}).toBuffer()
      const bodies = [...Array.from({length: 10}, (_, i) => dead(good, i)), ...Array.from({length: 10}, (_, i) => dead(bad, 10 + i)), ...Array.from({length: 10}, (_, i) => dead(good, 20 + i))]
      await adapter.publish(dlq, bodies.map((body) => out(body)))
      const report = await redrive({source: adapter, dlq, selectors: [], max: 0, bypass: false, dryRun: false, batchSize: 10})
      assert.equal(report.stopped_early, true)
      assert.match(report.stop_reason ?? '', new RegExp(`publishing to ${bad} failed: .*not a list`))
      assert.deepEqual(report.counts, {examined: 20, redriven: 10, would_redrive: 0, skipped: 0, poison: 0, failed: 10})
      assert.equal(await client.llen(good), 10)
      assert.equal(await client.get(bad), 'not a list')
      // The failed batch and the one after it are back on the DLQ, in their original order.
      assert.deepEqual(await client.lrangeBuffer(dlq, 0, -1), bodies.slice(10))
      assert.equal(await client.exists(`${dlq}:processing`, `${dlq}:bq-held`, `${dlq}:bq-lock`), 0)
    } finally {
      await adapter.close()
    }
  })
})
