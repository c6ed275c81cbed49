/**
 * The broker contract: what every adapter must do against a real broker. Each adapter's
 * integration test calls `brokerContractSuite` with a way to open it; every test uses its own
 * queue names, so tests neither see nor disturb each other's messages.
 */
import assert from 'node:assert/strict'
import {after, describe, it, type TestContext} from 'node:test'

import type {BrokerAdapter, BrokerMessage, DrainSession, OutgoingMessage, ReservedMessage} from '../../src/lib/brokers/adapter.js'
import {redactUrl} from '../../src/lib/brokers/shared/redact.js'
import {QueueNotFoundError} from '../../src/lib/errors.js'
import type {EnvelopeFields} from '../../src/lib/envelope/fields.js'
import {uniqueQueue} from '../support/brokers.js'

export interface ContractSetup {
  open(): Promise<BrokerAdapter>
  /** False (after t.skip) when the broker is not reachable; throws under CI. */
  available(t: TestContext): Promise<boolean>
  /**
   * Simulates a drain that dies mid-run: in another process (or on a connection that is then
   * killed), drain `queue`, take `take` messages, release the first `release` of them, and stop
   * without closing. Without it the crash-recovery test is skipped. What the test then expects
   * comes from the adapter's `capabilities.afterCrash`.
   */
  crashDrain?(queue: string, take: number, release: number): Promise<void>
  /** Removes whatever the tests left on the broker for these queues. */
  cleanup?(queues: string[]): Promise<void>
  /** Values (such as the test URL's password) that must never appear in displayUrl. */
  secrets?: string[]
  /** The largest body the broker carries, when below the 1 MiB the round-trip test sends (SQS: 1 MiB including the JSON around it). */
  maxBodyBytes?: number
  /**
   * Where `afterCrash` is `timeout-returns`: how long the lock or visibility timeout of the URL
   * `crashDrain` uses keeps a dead run's reservations hidden, plus slack (SQS: `?visibility=3`).
   * The crash test waits this long for the broker to return them.
   */
  reservationsReturnWithinMs?: number
  /**
   * The test broker creates queues on first use where the real one does not (bq's Service Bus test
   * server): an unknown queue cannot be seen there, so `capabilities.queuesExist` is not asserted.
   */
  createsQueuesOnFirstUse?: boolean
}

export function brokerContractSuite(name: string, setup: ContractSetup): void {
  const used: string[] = []
  const queue = (label: string) => {
    const q = uniqueQueue(`${name}-${label}`)
    used.push(q)
    return q
  }

  /** Opens an adapter for one test and always closes it. */
  async function withAdapter(t: TestContext, fn: (adapter: BrokerAdapter) => Promise<void>): Promise<void> {
    if (!(await setup.available(t))) return
    const adapter = await setup.open()
    try {
      await fn(adapter)
    } finally {
      await adapter.close()
    }
  }

  describe(`${name} broker contract`, () => {
    after(async () => {
      if (setup.cleanup !== undefined && used.length > 0) await setup.cleanup(used)
    })

    it('publishes, counts and browses bodies byte for byte', async (t) => {
      await withAdapter(t, async (adapter) => {
        const q = queue('roundtrip')
        const bodies = [
          // Values a JSON.parse/stringify round trip would change.
          Buffer.from('{"job":"urn:babel:orders:created","data":{"id":9007199254740993,"price":99.90,"name":"caf\\u00e9","z":-0,"e":1e3}}'),
          Buffer.from('{"s":"é 日本語 🎉 \u2028 ü"}', 'utf8'),
          Buffer.from(`{"blob":"${'x'.repeat(Math.min(1024 * 1024, (setup.maxBodyBytes ?? Infinity) - 11))}"}`),
          Buffer.from('not json {'),
          Buffer.from('{"job":"urn:babel:orders:paid"}'),
        ]
        await adapter.publish(q, [out(bodies[0], fields()), ...bodies.slice(1).map((body) => out(body))])
        assert.equal(await adapter.count(q), bodies.length)
        const found = await adapter.browse(q, {limit: 10})
        assertBodiesIn(found, bodies, ordered(adapter))
      })
    })

    it('browses without consuming, in order', async (t) => {
      await withAdapter(t, async (adapter) => {
        const q = queue('browse')
        const bodies = numbered(10)
        await adapter.publish(q, bodies.map((body) => out(body)))
        const first = await adapter.browse(q, {limit: 100})
        const second = await adapter.browse(q, {limit: 100})
        assertBodiesIn(first, bodies, ordered(adapter))
        assertBodiesIn(second, bodies, ordered(adapter))
        assert.equal(await adapter.count(q), 10)
      })
    })

    it('browses with offset and limit', async (t) => {
      await withAdapter(t, async (adapter) => {
        const q = queue('offset')
        const bodies = numbered(10)
        await adapter.publish(q, bodies.map((body) => out(body)))
        if (ordered(adapter)) {
          assertBodies(await adapter.browse(q, {offset: 3, limit: 4}), bodies.slice(3, 7))
          assertBodies(await adapter.browse(q, {offset: 8, limit: 5}), bodies.slice(8))
        } else {
          // Without an order, offset and limit still bound how many distinct messages come back.
          assertSomeOf(await adapter.browse(q, {offset: 3, limit: 4}), bodies, 4)
          assertSomeOf(await adapter.browse(q, {offset: 8, limit: 5}), bodies, 2)
        }
        assert.deepEqual(await adapter.browse(q, {offset: 20, limit: 5}), [])
        assert.deepEqual(await adapter.browse(q, {limit: 0}), [])
      })
    })

    it('treats an empty or unknown queue as empty; where queues exist apart from their messages, an unknown one is not found', async (t) => {
      await withAdapter(t, async (adapter) => {
        const q = queue('empty')
        if (adapter.capabilities.queuesExist && !setup.createsQueuesOnFirstUse) {
          const notFound = (error: unknown) => error instanceof QueueNotFoundError && error.code === 'queue-not-found' && error.exitCode === 1 && error.message.includes(q)
          await assert.rejects(adapter.count(q), notFound)
          await assert.rejects(adapter.browse(q, {limit: 5}), notFound)
          await assert.rejects(adapter.drain(q), notFound)
          assert.equal(await adapter.recover(q), 0)
          return
        }
        assert.equal(await adapter.count(q), 0)
        assert.deepEqual(await adapter.browse(q, {limit: 5}), [])
        const session = await adapter.drain(q)
        assert.deepEqual(await session.next(5), [])
        await session.close()
        assert.equal(await adapter.recover(q), 0)
      })
    })

    it('resolves a 5,000-message publish only when every message is countable', async (t) => {
      await withAdapter(t, async (adapter) => {
        const q = queue('batch')
        const bodies = numbered(5000)
        await adapter.publish(q, bodies.map((body) => out(body)))
        assert.equal(await adapter.count(q), 5000)
        if (ordered(adapter)) {
          assertBodies(await adapter.browse(q, {limit: 2}), bodies.slice(0, 2))
          assertBodies(await adapter.browse(q, {offset: 4998, limit: 10}), bodies.slice(4998))
        } else {
          assertSomeOf(await adapter.browse(q, {limit: 2}), bodies, 2)
          assertSomeOf(await adapter.browse(q, {offset: 4998, limit: 10}), bodies, 2)
        }
      })
    })

    it('drains: next hands out messages in order and ack removes them', async (t) => {
      await withAdapter(t, async (adapter) => {
        const q = queue('ack')
        const bodies = numbered(5)
        await adapter.publish(q, bodies.map((body) => out(body)))
        const session = await adapter.drain(q)
        const a = await session.next(2)
        if (ordered(adapter)) assertBodies(a, bodies.slice(0, 2))
        else assertSomeOf(a, bodies, 2)
        // Reserved messages are not waiting in the queue any more.
        assert.equal(await adapter.count(q), 3)
        await session.ack(a)
        const b = await session.next(10)
        assertBodiesIn(b, ordered(adapter) ? bodies.slice(2) : without(bodies, a), ordered(adapter))
        await session.ack(b)
        assert.deepEqual(await session.next(10), [])
        await session.close()
        assert.equal(await adapter.count(q), 0)
      })
    })

    it('returns released and un-acked messages at close, in their original order', async (t) => {
      await withAdapter(t, async (adapter) => {
        const q = queue('release')
        const bodies = numbered(8)
        await adapter.publish(q, bodies.map((body) => out(body)))
        const session = await adapter.drain(q)
        const taken = [...(await session.next(3)), ...(await session.next(4))]
        assert.equal(taken.length, 7)
        await session.ack([taken[0], taken[3]])
        // Released out of order on purpose; 2 and 6 are left neither acked nor released.
        await session.release([taken[5]])
        await session.release([taken[4], taken[1]])
        await session.close()
        // Unordered: whatever was not acked comes back (order is not the broker's to keep).
        const expected = ordered(adapter) ? [1, 2, 4, 5, 6, 7].map((i) => bodies[i]) : without(bodies, [taken[0], taken[3]])
        assert.equal(await adapter.count(q), expected.length)
        assertBodiesIn(await adapter.browse(q, {limit: 20}), expected, ordered(adapter))
      })
    })

    it('never hands out a released message again in the same session', async (t) => {
      await withAdapter(t, async (adapter) => {
        const q = queue('no-repeat')
        const bodies = numbered(3)
        await adapter.publish(q, bodies.map((body) => out(body)))
        const session = await adapter.drain(q)
        const first = await session.next(1)
        if (ordered(adapter)) assertBodies(first, bodies.slice(0, 1))
        else assertSomeOf(first, bodies, 1)
        await session.release(first)
        assertBodiesIn(await session.next(10), ordered(adapter) ? bodies.slice(1) : without(bodies, first), ordered(adapter))
        assert.deepEqual(await session.next(10), [])
        await session.close()
        assertBodiesIn(await adapter.browse(q, {limit: 10}), bodies, ordered(adapter))
      })
    })

    it('stops a drain at max', async (t) => {
      await withAdapter(t, async (adapter) => {
        const q = queue('max')
        const bodies = numbered(10)
        await adapter.publish(q, bodies.map((body) => out(body)))
        const session = await adapter.drain(q, {max: 4})
        const taken = await takeAll(session, 3)
        if (ordered(adapter)) assertBodies(taken, bodies.slice(0, 4))
        else assertSomeOf(taken, bodies, 4)
        await session.ack(taken)
        await session.close()
        assert.equal(await adapter.count(q), 6)
        assertBodiesIn(await adapter.browse(q, {limit: 10}), ordered(adapter) ? bodies.slice(4) : without(bodies, taken), ordered(adapter))
      })
    })

    it('does not hand out messages published after the drain started', async (t) => {
      await withAdapter(t, async (adapter) => {
        if (adapter.capabilities.drainBoundedAtStart === false) {
          t.skip(`${name} does not bound a drain by what the queue held at its start`)
          return
        }
        const q = queue('bounded')
        const before = numbered(3, 'before')
        const later = numbered(2, 'later')
        await adapter.publish(q, before.map((body) => out(body)))
        const session = await adapter.drain(q)
        await adapter.publish(q, later.map((body) => out(body)))
        const taken = await takeAll(session, 2)
        assertBodies(taken, before)
        await session.ack(taken)
        await session.close()
        assertBodies(await adapter.browse(q, {limit: 10}), later)
      })
    })

    it('moves messages to another queue atomically', async (t) => {
      await withAdapter(t, async (adapter) => {
        if (!adapter.capabilities.atomicMove) {
          t.skip(`${name} has no atomic move`)
          return
        }
        const source = queue('move-src')
        const target = queue('move-dst')
        const bodies = numbered(4)
        await adapter.publish(source, bodies.map((body) => out(body)))
        const session = await adapter.drain(source)
        assert.ok(session.moveAtomically !== undefined, 'atomicMove adapters implement moveAtomically')
        const taken = await session.next(4)
        // A redrive republishes a changed body (attempts reset), not the source bytes.
        const copies = taken.slice(0, 2).map((message) => out(Buffer.concat([message.body, Buffer.from(' moved')])))
        await session.moveAtomically(taken.slice(0, 2), target, copies)
        await session.release(taken.slice(2))
        await session.close()
        assertBodies(await adapter.browse(target, {limit: 10}), copies.map((copy) => copy.body))
        assertBodies(await adapter.browse(source, {limit: 10}), bodies.slice(2))
      })
    })

    it('recovers the reservations of a drain that crashed, losing nothing', async (t) => {
      if (setup.crashDrain === undefined) {
        t.skip(`${name} has no crash simulation`)
        return
      }
      const crashDrain = setup.crashDrain.bind(setup)
      await withAdapter(t, async (adapter) => {
        const q = queue('crash')
        const bodies = numbered(6)
        await adapter.publish(q, bodies.map((body) => out(body)))
        const afterCrash = adapter.capabilities.afterCrash
        t.diagnostic(`${name} afterCrash: ${afterCrash}`)
        switch (afterCrash) {
          case 'timeout-returns': {
            // The broker keeps the dead run's reservations hidden, then returns them by itself.
            const within = setup.reservationsReturnWithinMs
            assert.ok(within !== undefined, `${name} returns reservations on a timeout: its setup must say how long the crash URL's timeout is (reservationsReturnWithinMs)`)
            await crashDrain(q, 4, 1)
            assert.equal(await adapter.count(q), 2)
            assert.equal(await adapter.recover(q), 0)
            const deadline = Date.now() + within
            while ((await adapter.count(q)) < 6 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200))
            assert.equal(await adapter.count(q), 6)
            assertBodiesIn(await adapter.browse(q, {limit: 10}), bodies, ordered(adapter))
            return
          }
          case 'nothing-reserved': {
            // The dead run committed no progress: every message still waits, nothing to recover.
            await crashDrain(q, 4, 1)
            assert.equal(await adapter.count(q), 6)
            assert.equal(await adapter.recover(q), 0)
            assertBodies(await adapter.browse(q, {limit: 10}), bodies)
            const session = await adapter.drain(q)
            assertBodies(await takeAll(session, 4), bodies)
            await session.close()
            return
          }
          case 'broker-returns': {
            // Nothing is staged: the broker puts the dead run's reservations back by itself.
            await crashDrain(q, 4, 1)
            assert.equal(await eventuallyCount(adapter, q, 6), 6)
            assert.equal(await adapter.recover(q), 0)
            break
          }
          case 'transaction':
          case 'staging': {
            // The dead run's reservations are out of the queue until someone recovers them.
            await crashDrain(q, 4, 1)
            assert.equal(await adapter.count(q), 2)
            assert.equal(await adapter.recover(q), 4)
            assert.equal(await adapter.count(q), 6)
            break
          }
          default: {
            const unknown: never = afterCrash
            assert.fail(`no crash expectation for afterCrash ${String(unknown)}`)
          }
        }
        assertBodies(await adapter.browse(q, {limit: 10}), bodies)

        // A new drain recovers by itself, before it counts (or finds them already returned).
        await crashDrain(q, 3, 0)
        if (afterCrash === 'broker-returns') await eventuallyCount(adapter, q, 6)
        const session = await adapter.drain(q)
        const taken = await takeAll(session, 4)
        assertBodies(taken, bodies)
        await session.close()
        assertBodies(await adapter.browse(q, {limit: 10}), bodies)
      })
    })

    it('never shows a password in displayUrl', async (t) => {
      await withAdapter(t, async (adapter) => {
        assert.equal(redactUrl(adapter.displayUrl), adapter.displayUrl)
        for (const secret of setup.secrets ?? []) assert.ok(!adapter.displayUrl.includes(secret), 'displayUrl leaks a secret')
      })
    })

    it('allows closing a session and an adapter twice', async (t) => {
      if (!(await setup.available(t))) return
      const adapter = await setup.open()
      const q = queue('close')
      await adapter.publish(q, [out(Buffer.from('{"a":1}'))])
      const session = await adapter.drain(q)
      assert.equal((await session.next(1)).length, 1)
      await session.close()
      await session.close()
      await adapter.close()
      await adapter.close()
      const again = await setup.open()
      try {
        assert.equal(await again.count(q), 1)
      } finally {
        await again.close()
      }
    })
  })
}

/** Whether the adapter keeps queue order (capabilities.ordered, absent = true). */
export function ordered(adapter: BrokerAdapter): boolean {
  return adapter.capabilities.ordered !== false
}

/** Same bodies; in the same order only when `inOrder`. */
export function assertBodiesIn(found: BrokerMessage[], expected: Buffer[], inOrder: boolean): void {
  if (inOrder) return assertBodies(found, expected)
  const sorted = (list: Buffer[]) => [...list].sort(Buffer.compare)
  assertBodies(sorted(found.map((m) => m.body)).map((body) => ({body, headers: {}, native: {}})), sorted(expected))
}

/** `count` distinct messages, each one of `pool` (a multiset). */
export function assertSomeOf(found: BrokerMessage[], pool: Buffer[], count: number): void {
  assert.equal(found.length, count, `expected ${count} messages, found ${found.length}`)
  without(pool, found)
}

/** The multiset `pool` minus the bodies of `taken` (each of which must be in it). */
export function without(pool: Buffer[], taken: BrokerMessage[]): Buffer[] {
  const left = [...pool]
  for (const message of taken) {
    const at = left.findIndex((body) => body.equals(message.body))
    assert.ok(at >= 0, `unexpected body ${preview(message.body)}`)
    left.splice(at, 1)
  }
  return left
}

export function out(body: Buffer, envelope: EnvelopeFields | null = null): OutgoingMessage {
  return {body, fields: envelope}
}

export function fields(overrides: Partial<EnvelopeFields> = {}): EnvelopeFields {
  return {
    job: 'urn:babel:orders:created',
    traceId: 'trace-1',
    id: 'msg-1',
    queue: 'orders',
    lang: 'node',
    schemaVersion: 1,
    createdAt: 1_700_000_000_000,
    attempts: 2,
    ...overrides,
  }
}

/** Distinct small envelopes: `{"n":0,...}` … in publish order. */
export function numbered(n: number, tag = 'm'): Buffer[] {
  return Array.from({length: n}, (_, i) => Buffer.from(`{"job":"urn:babel:test:${tag}","n":${i}}`))
}

export function assertBodies(found: BrokerMessage[], expected: Buffer[]): void {
  assert.equal(found.length, expected.length, `expected ${expected.length} messages, found ${found.length}`)
  for (let i = 0; i < expected.length; i++) {
    assert.ok(Buffer.isBuffer(found[i].body), `message ${i} body is a Buffer`)
    if (!found[i].body.equals(expected[i])) {
      assert.fail(`message ${i} differs: ${preview(found[i].body)} != ${preview(expected[i])}`)
    }
  }
}

function preview(body: Buffer): string {
  const text = body.toString('utf8')
  return text.length > 80 ? `${text.slice(0, 80)}… (${body.length} bytes)` : text
}

/** The queue's count once it reaches `expected`, or its last count after a few seconds. */
async function eventuallyCount(adapter: BrokerAdapter, queue: string, expected: number, timeoutMs = 10_000): Promise<number> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const count = await adapter.count(queue)
    if (count === expected || Date.now() >= deadline) return count
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

/** Calls next(batch) until the session is done. */
export async function takeAll(session: DrainSession, batch: number): Promise<ReservedMessage[]> {
  const all: ReservedMessage[] = []
  for (;;) {
    const got = await session.next(batch)
    if (got.length === 0) return all
    all.push(...got)
  }
}
