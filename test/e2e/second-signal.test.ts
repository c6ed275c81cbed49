// @test-uses redis
/**
 * A second Ctrl-C during a redrive exits at once (130), but not silently: one line says what had
 * moved and which `bq dlq recover` returns what the batch in flight left in staging. A census
 * counts every message across the DLQ, staging and the target, before and after the recover.
 */
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {depth, redisUrl} from '../suites/command-suite.js'
import {requireBroker, uniqueQueue} from '../support/brokers.js'
import {hasStackTrace, jsonResult, runBq, startBq} from '../support/cli.js'

const MESSAGES = 3000

let dir: string
let env: NodeJS.ProcessEnv
before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-second-signal-'))
  env = {XDG_DATA_HOME: dir, BQ_BROKER: '', BQ_LEDGER: path.join(dir, 'ledger.db')}
})
after(() => rmSync(dir, {recursive: true, force: true}))

const cases = [
  {name: 'embedded sqlite', url: () => `sqlite://${path.join(dir, 'q.db')}`, available: async (_t: TestContext) => true, staging: reservedRows},
  {name: 'redis', url: () => redisUrl, available: (t: TestContext) => requireBroker(t, 'Redis', new URL(redisUrl).hostname, Number(new URL(redisUrl).port || 6379)), staging: (url: string, dlq: string) => depth(url, `${dlq}:processing`)},
]

/** The embedded store's staging: rows a drain reserved and neither acknowledged nor returned. */
async function reservedRows(url: string, dlq: string): Promise<number> {
  const listed = await runBq(['inflight', 'ls', dlq, '-b', url, '--limit', '0', '--json'], {env})
  const gauges = jsonResult(listed.stdout).gauges as Array<{name: string; value: number}>
  return gauges.find((gauge) => gauge.name === 'reserved')?.value ?? 0
}

function deadLetter(i: number, queue: string): string {
  const id = `00000000-0000-4000-9000-${i.toString().padStart(12, '0')}`
  return JSON.stringify({
    job: 'urn:babel:orders:created', trace_id: id, data: {order_id: i}, meta: {id, queue, lang: 'php', schema_version: 1, created_at: 1764489600000}, attempts: 3,
    dead_letter: {reason: 'failed', error: 'timeout', failed_at: 1764489660000, original_queue: queue, attempts: 3, lang: 'php'},
  })
}

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const end = Date.now() + 30_000
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

for (const c of cases) {
  describe(`a second Ctrl-C during a redrive (${c.name})`, () => {
    test('exits 130 with one line saying what moved and how to recover the rest; nothing is lost', {timeout: 120_000}, async (t) => {
      if (!(await c.available(t))) return
      const url = c.url()
      const queue = uniqueQueue("it's")
      const dlq = `${queue}.dlq`
      const file = path.join(dir, 'seed.jsonl')
      writeFileSync(file, Array.from({length: MESSAGES}, (_, i) => deadLetter(i, queue)).join('\n') + '\n')
      assert.equal((await runBq(['replay', file, '--as-is', '--to', dlq, '--yes', '-b', url], {env, timeoutMs: 60_000})).code, 0)
      const census = async () => (await depth(url, dlq)) + (await depth(url, queue)) + (await c.staging(url, dlq))

      // --rate 100: batches of 100 a second; the run spends most of its time holding one.
      const run = startBq(['dlq', 'redrive', queue, '--rate', '100', '--yes', '-b', url], {env, timeoutMs: 60_000})
      // Batches grow from one message: wait until they are full (a second each).
      await until(async () => (await depth(url, queue)) >= 400, 'the redrive to move full batches')
      run.child.kill('SIGINT')
      await new Promise((resolve) => setTimeout(resolve, 50))
      run.child.kill('SIGINT')
      const stopped = await run.done

      assert.equal(stopped.code, 130, stopped.stderr)
      assert.ok(!hasStackTrace(stopped.stderr), stopped.stderr)
      const line = /stopped at once: (\d+) moved of (\d+) examined; (.*)/.exec(stopped.stderr)
      assert.ok(line, `no line naming what moved: ${stopped.stderr}`)
      // The queue name holds a quote: the command is shell-quoted, ready to paste.
      assert.ok(line[3].includes(`run bq dlq recover '${queue.replaceAll("'", "'\\''")}' (with the same --broker or --context)`), line[0])
      assert.ok(Number(line[1]) > 0 && Number(line[1]) < MESSAGES, stopped.stderr)
      assert.equal(await census(), MESSAGES, 'every message is on the DLQ, in staging or on the target')

      const recovered = await runBq(['dlq', 'recover', queue, '-b', url], {env})
      assert.equal(recovered.code, 0, recovered.stderr)
      assert.equal(await c.staging(url, dlq), 0)
      assert.equal((await depth(url, dlq)) + (await depth(url, queue)), MESSAGES)
    })
  })
}
