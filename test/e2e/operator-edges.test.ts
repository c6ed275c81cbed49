// @test-uses redis
/**
 * Small edges an operator meets, through bin/run.js on the embedded store and Redis: publish with
 * nothing on stdin, dry-run progress wording, shell-quoted hints, a misspelled Redis queue, long
 * run listings, `--json` on oclif's own commands, control bytes from names and bodies.
 */
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {depth, redisUrl} from '../suites/command-suite.js'
import {requireBroker, uniqueQueue} from '../support/brokers.js'
import {hasStackTrace, runBq} from '../support/cli.js'

let dir: string
let env: NodeJS.ProcessEnv
before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-operator-edges-'))
  env = {XDG_DATA_HOME: dir, BQ_BROKER: '', BQ_LEDGER: path.join(dir, 'ledger.db')}
})
after(() => rmSync(dir, {recursive: true, force: true}))

const cases = [
  {name: 'embedded sqlite', url: () => `sqlite://${path.join(dir, 'q.db')}`, available: async (_t: TestContext) => true},
  {name: 'redis', url: () => redisUrl, available: (t: TestContext) => requireBroker(t, 'Redis', new URL(redisUrl).hostname, Number(new URL(redisUrl).port || 6379))},
]

for (const c of cases) {
  describe(`operator edges (${c.name})`, () => {
    test('publish with an empty stdin and no --data is refused, and publishes nothing', async (t) => {
      if (!(await c.available(t))) return
      const queue = uniqueQueue('empty-stdin')
      for (const stdin of ['', '  \n']) {
        const result = await runBq(['publish', 'urn:babel:orders:created', '-q', queue, '-b', c.url()], {env, stdin})
        assert.equal(result.code, 2, result.stderr)
        assert.ok(!hasStackTrace(result.stderr), result.stderr)
        assert.match(result.stderr, /^Error: stdin is empty and there is no --data/m)
      }
      assert.equal(await depth(c.url(), queue), 0)
      const explicit = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '-b', c.url()], {env})
      assert.equal(explicit.code, 0, explicit.stderr)
    })
  })
}
