// @test-uses redis rabbitmq kafka
/**
 * A run that moves messages and whose output closes (`bq dlq redrive q --list --yes | head -1`)
 * stops after the batch in flight, like Ctrl-C: the rest stay on the DLQ, the summary still goes
 * to stderr, the exit code is 3 (partial), and the ledger holds the counts it did move. A census
 * on each broker counts every message before and after, across the DLQ, staging and target. A dry
 * run whose output closes stops reading as well.
 */
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {amqpUrl, depth, redisUrl} from '../suites/command-suite.js'
import {requireBroker, uniqueQueue} from '../support/brokers.js'
import {hasStackTrace, jsonResult, runBq, startBq} from '../support/cli.js'

const kafkaUrl = process.env.BQ_TEST_KAFKA_URL ?? 'kafka://127.0.0.1:19092'
const MESSAGES = 3000

let dir: string
let env: NodeJS.ProcessEnv
before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-output-closed-'))
  env = {XDG_DATA_HOME: dir, BQ_BROKER: '', BQ_LEDGER: path.join(dir, 'ledger.db')}
})
after(() => rmSync(dir, {recursive: true, force: true}))

function reachable(url: string, name: string, port: number): (t: TestContext) => Promise<boolean> {
  return (t) => requireBroker(t, name, new URL(url.split(',')[0]).hostname, Number(new URL(url.split(',')[0]).port || port))
}

interface Case {
  name: string
  url: () => string
  available: (t: TestContext) => Promise<boolean>
  /** Where a run keeps messages it has taken but not yet moved (Redis: the processing list). */
  staging?: (dlq: string) => string
}

const cases: Case[] = [
  {name: 'embedded sqlite', url: () => `sqlite://${path.join(dir, 'q.db')}`, available: async () => true},
  {name: 'redis', url: () => redisUrl, available: reachable(redisUrl, 'Redis', 6379), staging: (dlq) => `${dlq}:processing`},
  {name: 'rabbitmq', url: () => amqpUrl, available: reachable(amqpUrl, 'RabbitMQ', 5672)},
  {name: 'kafka', url: () => kafkaUrl, available: reachable(kafkaUrl.replace('kafka://', 'http://'), 'Kafka', 9092)},
]

function deadLetter(i: number, queue: string): string {
  const id = `00000000-0000-4000-8000-${i.toString().padStart(12, '0')}`
  return JSON.stringify({
    job: 'urn:babel:orders:created', trace_id: id, data: {order_id: i}, meta: {id, queue, lang: 'php', schema_version: 1, created_at: 1764489600000}, attempts: 3,
    dead_letter: {reason: 'failed', error: 'timeout', failed_at: 1764489660000, original_queue: queue, attempts: 3, lang: 'php'},
  })
}

for (const c of cases) {
  describe(`a redrive whose output closes (${c.name})`, () => {
    test('stops after the batch in flight, leaves the rest on the DLQ, exits 3 and records what it moved', {timeout: 180_000}, async (t) => {
      if (!(await c.available(t))) return
      const url = c.url()
      const queue = uniqueQueue('pipe')
      const dlq = `${queue}.dlq`
      const file = path.join(dir, `${queue}.jsonl`)
      writeFileSync(file, Array.from({length: MESSAGES}, (_, i) => deadLetter(i, queue)).join('\n') + '\n')
      const seeded = await runBq(['replay', file, '--as-is', '--to', dlq, '--yes', '-b', url], {env, timeoutMs: 120_000})
      assert.equal(seeded.code, 0, seeded.stderr)
      const census = async () => ({dlq: await depth(url, dlq), target: await depth(url, queue), staging: c.staging ? await depth(url, c.staging(dlq)) : 0})
      assert.deepEqual(await census(), {dlq: MESSAGES, target: 0, staging: 0})

      // The reader takes the first line and goes away, as `| head -1` does.
      const {child, done} = startBq(['dlq', 'redrive', queue, '--yes', '--list', '--max', String(MESSAGES), '-b', url], {env, timeoutMs: 120_000})
      child.stdout.once('data', () => child.stdout.destroy())
      const run = await done

      assert.equal(run.code, 3, run.stderr)
      assert.ok(!hasStackTrace(run.stderr), run.stderr)
      const summary = /(\d+) examined: (\d+) moved, .*stopped early: the output closed/.exec(run.stderr)
      assert.ok(summary, `no summary naming the closed output: ${run.stderr}`)
      const moved = Number(summary[2])
      assert.ok(moved > 0 && moved < MESSAGES, `moved ${moved} of ${MESSAGES}: the run should stop after a batch`)

      const after = await census()
      assert.equal(after.dlq + after.target + after.staging, MESSAGES, `census ${JSON.stringify(after)}`)
      assert.deepEqual(after, {dlq: MESSAGES - moved, target: moved, staging: 0})

      const runs = jsonResult((await runBq(['runs', 'list', '--json'], {env})).stdout).runs as Array<{id: string; source: string}>
      const recorded = runs.find((r) => r.source === dlq)
      assert.ok(recorded, 'the run is in the ledger')
      const shown = jsonResult((await runBq(['runs', 'show', recorded.id, '--json'], {env})).stdout)
      assert.equal(shown.outcome, 'partial')
      assert.equal(shown.exit_code, 3)
      assert.equal((shown.counts as {redriven: number}).redriven, moved)
    })

    test('a dry run stops reading too, and leaves the DLQ as it was', {timeout: 180_000}, async (t) => {
      if (!(await c.available(t))) return
      const url = c.url()
      const queue = uniqueQueue('pipe-dry')
      const dlq = `${queue}.dlq`
      const file = path.join(dir, `${queue}.jsonl`)
      writeFileSync(file, Array.from({length: MESSAGES}, (_, i) => deadLetter(i, queue)).join('\n') + '\n')
      assert.equal((await runBq(['replay', file, '--as-is', '--to', dlq, '--yes', '-b', url], {env, timeoutMs: 120_000})).code, 0)

      const {child, done} = startBq(['dlq', 'redrive', queue, '--dry-run', '-b', url], {env, timeoutMs: 120_000})
      child.stdout.once('data', () => child.stdout.destroy())
      const run = await done
      assert.equal(run.code, 3, run.stderr)
      const summary = /dry run: (\d+) examined: .*stopped early: the output closed/.exec(run.stderr)
      assert.ok(summary, run.stderr)
      assert.ok(Number(summary[1]) < MESSAGES, `examined ${summary[1]} of ${MESSAGES}: the dry run should stop`)
      assert.equal(await depth(url, dlq), MESSAGES)
      assert.equal(await depth(url, queue), 0)
    })
  })
}
