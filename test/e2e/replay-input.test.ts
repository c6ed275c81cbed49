// @test-uses redis
/**
 * replay's input, through bin/run.js: a file that cannot be read is a usage error (exit 2) before
 * a broker is opened, and no run is recorded (so is a device such as /dev/zero); an input whose
 * every message is poison (a binary file, an empty file) publishes nothing and exits 1; a file with one good envelope
 * among poison still publishes it (exit 0).
 */
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {depth, redisUrl} from '../suites/command-suite.js'
import {requireBroker, uniqueQueue} from '../support/brokers.js'
import {hasStackTrace, jsonOutput, jsonResult, runBq} from '../support/cli.js'
import {repoRoot} from '../support/conformance.js'

const envelope = readFileSync(path.join(repoRoot, 'examples', 'orders.dlq.jsonl'), 'utf8').split('\n')[0]

let dir: string
let env: NodeJS.ProcessEnv
before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-replay-input-'))
  env = {XDG_DATA_HOME: dir, BQ_BROKER: '', BQ_LEDGER: path.join(dir, 'ledger.db')}
})
after(() => rmSync(dir, {recursive: true, force: true}))

const cases = [
  {name: 'embedded sqlite', url: () => `sqlite://${path.join(dir, 'q.db')}`, available: async (_t: TestContext) => true},
  {name: 'redis', url: () => redisUrl, available: (t: TestContext) => requireBroker(t, 'Redis', new URL(redisUrl).hostname, Number(new URL(redisUrl).port || 6379))},
]

async function recordedRuns(): Promise<Array<{source: string}>> {
  const listed = await runBq(['runs', 'list', '--json'], {env})
  if (listed.code !== 0) return []
  return jsonResult(listed.stdout).runs as Array<{source: string}>
}

for (const c of cases) {
  describe(`replay input (${c.name})`, () => {
    test('a file that cannot be read is exit 2 before anything, and no run is recorded', async (t) => {
      if (!(await c.available(t))) return
      const queue = uniqueQueue('replay-missing')
      for (const file of [path.join(dir, 'does-not-exist.jsonl'), dir, '/dev/zero']) {
        const result = await runBq(['replay', file, '--to', queue, '--yes', '-b', c.url()], {env})
        assert.equal(result.code, 2, result.stderr)
        assert.ok(!hasStackTrace(result.stderr), result.stderr)
        assert.match(result.stderr, /^Error: cannot read input .*(no such file|directory|character device, not a regular file)/m)
        assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
        assert.ok(!(await recordedRuns()).some((run) => run.source === file), 'no run recorded')
        const json = jsonOutput((await runBq(['replay', file, '--to', queue, '--yes', '-b', c.url(), '--json'], {env})).stdout)
        assert.equal(json.ok, false)
        if (!json.ok) assert.equal(json.error.exit_code, 2)
      }
      assert.equal(await depth(c.url(), queue), 0)
    })

    test('an input whose every message is poison publishes nothing and exits 1', async (t) => {
      if (!(await c.available(t))) return
      const queue = uniqueQueue('replay-poison')
      const binary = path.join(dir, 'binary.bin')
      writeFileSync(binary, Buffer.from([0x00, 0xff, 0xfe, 0x01, 0x0a, 0xc3, 0x28, 0x0a, 0x7f, 0x45, 0x4c, 0x46]))
      const empty = path.join(dir, 'empty.jsonl')
      writeFileSync(empty, '')
      for (const file of [binary, empty]) {
        const result = await runBq(['replay', file, '--to', queue, '--yes', '-b', c.url()], {env, timeoutMs: 60_000})
        assert.equal(result.code, 1, `${file}: ${result.stderr}`)
        assert.ok(!hasStackTrace(result.stderr), result.stderr)
        assert.match(result.stderr, /Error: nothing was published: .* poison/)
        const dry = await runBq(['replay', file, '--to', queue, '--dry-run', '-b', c.url()], {env, timeoutMs: 60_000})
        assert.equal(dry.code, 1, `${file} (dry run): ${dry.stderr}`)
      }
      assert.equal(await depth(c.url(), queue), 0)
    })

    test('one envelope among poison lines is still published (exit 0)', async (t) => {
      if (!(await c.available(t))) return
      const queue = uniqueQueue('replay-mixed')
      const file = path.join(dir, 'mixed.jsonl')
      writeFileSync(file, `not json\n${envelope}\n`)
      const result = await runBq(['replay', file, '--to', queue, '--yes', '-b', c.url()], {env})
      assert.equal(result.code, 0, result.stderr)
      assert.equal(await depth(c.url(), queue), 1)
    })
  })
}
