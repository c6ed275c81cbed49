/**
 * The in-flight suite: `bq inflight ls` through bin/run.js against one real broker. Each broker's
 * own in-flight test file calls `inflightSuite` with a `hold` that takes messages the way that
 * broker's consumers do (its own client, never bq) and leaves them unfinished. Under CI=true a
 * missing broker fails.
 */
import assert from 'node:assert/strict'
import {describe, test} from 'node:test'
import type {TestContext} from 'node:test'

import {uniqueQueue} from '../support/brokers.js'
import {hasStackTrace, jsonOutput, runBq} from '../support/cli.js'

export interface HeldWork {
  /** Finish what hold() took (ack, complete, commit) so nothing stays in flight. */
  release(): Promise<void>
}

export interface InflightCase {
  name: string
  url: () => string
  available: (t: TestContext) => Promise<boolean>
  /**
   * Takes `count` of the messages waiting in `queue` as a consumer of this broker would and
   * leaves them unfinished. Resolves once the broker has handed them out.
   */
  hold(queue: string, count: number): Promise<HeldWork>
  /** The gauge (summed over its labels) that counts what hold() took, e.g. `unacked`. */
  heldGauge: string
  /**
   * The held gauge counts what hold() took together with what still waits, because the broker has
   * no count of taken messages alone (Service Bus: `active` counts peek-locked messages with the
   * available ones). The suite then expects every published message while they are held (so the
   * held ones are counted), and only those nobody took once release() finished them. Absent = false.
   */
  heldAmongWaiting?: boolean
  /** Where the elements show (Redis `processing`, Laravel `reserved`); absent where the broker shows counts only. */
  elementPlace?: string
  /** A queue that does not exist is exit 1 `queue-not-found` (capabilities.queuesExist); else it shows nothing in flight. */
  queuesExist: boolean
  /** The broker's statistics lag behind its state (RabbitMQ's management API): how long to poll for the held count. */
  settleMs?: number
}

export interface InflightJson {
  gauges: Array<{name: string; value: number; labels?: Record<string, string>}>
  elements: Array<{place: string; id: string | null; attempts: number | null; age_seconds: number | null}>
  counts_only: string | null
  returns_itself: string | null
}

/** `bq inflight ls --json`, checked for bq's JSON envelope and no stack trace. */
export async function inflightJson(url: string, queue: string, extra: string[] = []): Promise<{code: number; output: ReturnType<typeof jsonOutput>; stderr: string}> {
  const result = await runBq(['inflight', 'ls', queue, '-b', url, ...extra, '--json'])
  assert.ok(!hasStackTrace(result.stderr), result.stderr)
  return {code: result.code, output: jsonOutput(result.stdout), stderr: result.stderr}
}

export function gaugeSum(listing: InflightJson, name: string): number {
  return listing.gauges.filter((g) => g.name === name).reduce((sum, g) => sum + g.value, 0)
}

/** Polls `bq inflight ls` until `accept` holds (the broker's numbers may lag), then returns that listing. */
export async function inflightUntil(url: string, queue: string, accept: (listing: InflightJson) => boolean, waitMs: number): Promise<InflightJson> {
  const until = Date.now() + waitMs
  for (;;) {
    const {code, output, stderr} = await inflightJson(url, queue)
    assert.equal(code, 0, stderr)
    assert.ok(output.ok)
    const listing = output.result as unknown as InflightJson
    if (accept(listing) || Date.now() > until) return listing
    await new Promise((resolve) => setTimeout(resolve, 500))
  }
}

async function publish(url: string, queue: string, count: number): Promise<string[]> {
  const published = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--count', String(count), '-b', url])
  assert.equal(published.code, 0, published.stderr)
  return published.stdout.trim().split('\n')
}

export function inflightSuite(broker: InflightCase): void {
  describe(`inflight ls on ${broker.name}`, () => {
    test('shows what a consumer took and did not finish, from the broker\'s own numbers', async (t) => {
      if (!(await broker.available(t))) return
      const queue = uniqueQueue('inflight')
      const ids = await publish(broker.url(), queue, 5)
      const held = await broker.hold(queue, 3)
      // What the held gauge shows while 3 of the 5 are held, and once they are finished.
      const [whileHeld, afterRelease] = broker.heldAmongWaiting ? [5, 2] : [3, 0]
      try {
        const listing = await inflightUntil(broker.url(), queue, (l) => gaugeSum(l, broker.heldGauge) === whileHeld, broker.settleMs ?? 5000)
        assert.equal(gaugeSum(listing, broker.heldGauge), whileHeld, JSON.stringify(listing.gauges))
        if (broker.elementPlace === undefined) {
          assert.equal(listing.elements.length, 0)
          assert.ok(listing.counts_only, 'a broker that shows counts only says why')
        } else {
          assert.equal(listing.elements.length, 3)
          for (const element of listing.elements) {
            assert.equal(element.place, broker.elementPlace)
            assert.ok(element.id !== null && ids.includes(element.id), `${element.id} is one of the published ids`)
            assert.equal(typeof element.age_seconds, 'number')
            assert.equal(typeof element.attempts, 'number')
          }
        }
        const table = await runBq(['inflight', 'ls', queue, '-b', broker.url()])
        assert.equal(table.code, 0, table.stderr)
        assert.match(table.stdout, new RegExp(broker.heldGauge))
        assert.ok(!hasStackTrace(table.stderr), table.stderr)
      } finally {
        await held.release()
      }
      const after = await inflightUntil(broker.url(), queue, (l) => gaugeSum(l, broker.heldGauge) === afterRelease, broker.settleMs ?? 5000)
      assert.equal(gaugeSum(after, broker.heldGauge), afterRelease, 'finished work is no longer in flight')
    })

    test(broker.queuesExist ? 'a queue that does not exist is exit 1, in one line' : 'a queue nobody took from has nothing in flight', async (t) => {
      if (!(await broker.available(t))) return
      const queue = uniqueQueue('inflight-none')
      const {code, output, stderr} = await inflightJson(broker.url(), queue)
      if (broker.queuesExist) {
        assert.equal(code, 1, stderr)
        assert.ok(!output.ok && output.error.code === 'queue-not-found', JSON.stringify(output))
        const plain = await runBq(['inflight', 'ls', queue, '-b', broker.url()])
        assert.equal(plain.code, 1)
        assert.equal(plain.stderr.trim().split('\n').length, 1, plain.stderr)
      } else {
        assert.equal(code, 0, stderr)
        const listing = (output as {result: unknown}).result as InflightJson
        assert.equal(listing.gauges.reduce((sum, g) => sum + (g.name === 'consumers' ? 0 : g.value), 0), 0)
        assert.equal(listing.elements.length, 0)
      }
    })
  })
}
