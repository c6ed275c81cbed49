// @test-uses redis
/**
 * `bq dlq ls --format openmetrics` (and prometheus) and `bq inflight ls --format openmetrics`
 * through bin/run.js, on the embedded store and the real Redis: the text is read back with the
 * parser the unit tests use (test/support/metrics-text.ts).
 */
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {Redis} from 'ioredis'

import {requireBroker, uniqueQueue} from '../support/brokers.js'
import {hasStackTrace, jsonOutput, runBq} from '../support/cli.js'
import {repoRoot} from '../support/conformance.js'
import {family, parseOpenMetrics, parsePrometheusText, sampleValue} from '../support/metrics-text.js'

/** Takes `count` elements as an SDK consumer does (BLMOVE <queue> <queue>:processing LEFT RIGHT) and leaves them there. */
async function holdOnRedis(queue: string, count: number): Promise<number> {
  const redis = new Redis(redisUrl, {maxRetriesPerRequest: 1})
  try {
    for (let i = 0; i < count; i++) await redis.lmove(queue, `${queue}:processing`, 'LEFT', 'RIGHT')
  } finally {
    redis.disconnect()
  }
  return count
}

const redisUrl = process.env.BQ_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0'
const exampleDlq = readFileSync(path.join(repoRoot, 'examples', 'orders.dlq.jsonl'), 'utf8')
/** The oldest dead_letter.failed_at of examples/orders.dlq.jsonl. */
const oldestFailedAt = 1764489660000
let dir: string

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-openmetrics-'))
})
after(() => rmSync(dir, {recursive: true, force: true}))

/** The four example dead letters (3 failed, 1 unknown_urn) on `<queue>.dlq`. */
async function fillDlq(broker: string, queue: string, dlq = `${queue}.dlq`): Promise<void> {
  const file = path.join(dir, `${queue}.jsonl`)
  writeFileSync(file, exampleDlq.replaceAll('"original_queue":"orders"', `"original_queue":"${queue}"`))
  const replayed = await runBq(['replay', file, '--as-is', '--to', dlq, '--yes', '-b', broker])
  assert.equal(replayed.code, 0, replayed.stderr)
}

const brokers: Array<{name: string; url: () => string; kind: string; available: (t: TestContext) => Promise<boolean>}> = [
  {name: 'embedded sqlite', url: () => `sqlite://${path.join(dir, 'metrics.db')}`, kind: 'sqlite', available: async () => true},
  {name: 'redis', url: () => redisUrl, kind: 'redis', available: (t) => requireBroker(t, 'Redis', '127.0.0.1', 6379)},
]

for (const broker of brokers) {
  describe(`metrics on ${broker.name}`, () => {
    test('dlq ls --format openmetrics: depth, sampled, per reason and the oldest failed_at age, per DLQ', async (t) => {
      if (!(await broker.available(t))) return
      const queue = uniqueQueue('om')
      await fillDlq(broker.url(), queue)
      const started = Date.now()
      const result = await runBq(['dlq', 'ls', '--format', 'openmetrics', '--match', `${queue}*`, '-b', broker.url()])
      assert.equal(result.code, 0, result.stderr)
      assert.ok(!hasStackTrace(result.stderr), result.stderr)
      const {families, units} = parseOpenMetrics(result.stdout)
      const labels = {broker: broker.kind, broker_url: broker.url(), queue: `${queue}.dlq`}
      assert.equal(sampleValue(family(families, 'bq_dlq_messages'), labels), 4)
      assert.equal(sampleValue(family(families, 'bq_dlq_sampled_messages'), labels), 4)
      const reasons = family(families, 'bq_dlq_messages_by_reason')
      assert.equal(sampleValue(reasons, {...labels, reason: 'failed'}), 3)
      assert.equal(sampleValue(reasons, {...labels, reason: 'unknown_urn'}), 1)
      assert.equal(reasons.metrics.length, 2, 'no "other": the top reasons are all of them')
      const age = sampleValue(family(families, 'bq_dlq_oldest_failed_age_seconds'), labels) ?? Number.NaN
      assert.ok(age >= (started - oldestFailedAt) / 1000 - 1 && age <= (Date.now() - oldestFailedAt) / 1000 + 1, `age ${age}`)
      assert.equal(units.get('bq_dlq_oldest_failed_age_seconds'), 'seconds')
      // The listing read without taking anything.
      const again = parseOpenMetrics((await runBq(['dlq', 'ls', '--format', 'openmetrics', '--match', `${queue}*`, '-b', broker.url()])).stdout)
      assert.equal(sampleValue(family(again.families, 'bq_dlq_messages'), labels), 4)
    })

    test('a hostile DLQ name is escaped and comes back exactly; --format prometheus has the same samples', async (t) => {
      if (!(await broker.available(t))) return
      const queue = uniqueQueue('om-hostile')
      const dlq = `${queue}"we\\ird\nü🚀 {x="1"},.dlq`
      await fillDlq(broker.url(), queue, dlq)
      const om = await runBq(['dlq', 'ls', '--format', 'openmetrics', '--match', `${queue}*`, '-b', broker.url()])
      assert.equal(om.code, 0, om.stderr)
      const labels = {broker: broker.kind, broker_url: broker.url(), queue: dlq}
      assert.equal(sampleValue(family(parseOpenMetrics(om.stdout).families, 'bq_dlq_messages'), labels), 4)
      const prom = await runBq(['dlq', 'ls', '--format', 'prometheus', '--match', `${queue}*`, '-b', broker.url()])
      assert.equal(prom.code, 0, prom.stderr)
      assert.equal(sampleValue(family(parsePrometheusText(prom.stdout), 'bq_dlq_messages_by_reason'), {...labels, reason: 'failed'}), 3)
    })

    test('inflight ls --format openmetrics: the broker\'s in-flight figures, each its own family', async (t) => {
      if (!(await broker.available(t))) return
      const queue = uniqueQueue('om-inflight')
      const published = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--count', '5', '-b', broker.url()])
      assert.equal(published.code, 0, published.stderr)
      const held = broker.kind === 'redis' ? await holdOnRedis(queue, 3) : 0
      const result = await runBq(['inflight', 'ls', queue, '--format', 'openmetrics', '-b', broker.url()])
      assert.equal(result.code, 0, result.stderr)
      assert.ok(!hasStackTrace(result.stderr), result.stderr)
      const {families} = parseOpenMetrics(result.stdout)
      const labels = {broker: broker.kind, broker_url: broker.url(), queue}
      const gauge = broker.kind === 'redis' ? 'bq_inflight_processing_messages' : 'bq_inflight_reserved_messages'
      assert.equal(sampleValue(family(families, gauge), labels), held)
      const json = await runBq(['inflight', 'ls', queue, '--json', '-b', broker.url()])
      const output = jsonOutput(json.stdout)
      assert.ok(output.ok, json.stdout)
    })
  })
}

describe('--format refusals', () => {
  test('--json with --format openmetrics is a usage error (exit 2), before any broker is asked', async () => {
    for (const command of [['dlq', 'ls'], ['inflight', 'ls', 'orders']]) {
      const result = await runBq([...command, '--format', 'openmetrics', '--json', '-b', 'redis://127.0.0.1:1'])
      assert.equal(result.code, 2, result.stdout + result.stderr)
      const output = jsonOutput(result.stdout)
      assert.ok(!output.ok && output.error.code === 'usage' && /--json and --format openmetrics/.test(output.error.message), result.stdout)
    }
  })

  test('an unknown format is a one-line usage error', async () => {
    const result = await runBq(['dlq', 'ls', '--format', 'csv'])
    assert.equal(result.code, 2)
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
    assert.match(result.stderr, /table, openmetrics, prometheus/)
  })
})
