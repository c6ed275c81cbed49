/** --where / --since / --until end to end on the embedded store, on the commands the per-broker suite does not cover: replay and dlq inspect. */
import {after, before, test} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {repoRoot} from '../support/conformance.js'
import {jsonResult, runBq} from '../support/cli.js'

const exampleDlq = path.join(repoRoot, 'examples', 'orders.dlq.jsonl')
let dir: string
let broker: string

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-select-'))
  broker = `sqlite://${path.join(dir, 'queues.db')}`
})
after(() => rmSync(dir, {recursive: true, force: true}))

test('replay --where and --since/--until (on failed_at in a file) publish only what matches', async () => {
  // failed_at: 001 08:01:00, 002 08:02:40, 003 08:03:21, 004 08:06:00 (2025-11-30, UTC).
  const run = await runBq(['replay', exampleDlq, '--to', 'picked', '--where', 'job == "urn:babel:orders:created" && attempts >= 3', '--since', '2025-11-30T08:02:00Z', '--until', '2025-11-30T08:06:00Z', '--yes', '-b', broker, '--json'])
  assert.equal(run.code, 0, run.stderr)
  const report = jsonResult(run.stdout) as {counts: Record<string, number>; items: Array<{id: string; outcome: string}>}
  assert.deepEqual(report.counts, {examined: 4, redriven: 1, would_redrive: 0, skipped: 3, poison: 0, failed: 0})
  assert.deepEqual(report.items.filter((i) => i.outcome === 'redriven').map((i) => i.id), ['4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa002'])
})

test('dlq inspect groups and lists only the selection, and says when nothing matches', async () => {
  assert.equal((await runBq(['replay', exampleDlq, '--as-is', '--to', 'orders.dlq', '--yes', '-b', broker])).code, 0)
  const report = jsonResult((await runBq(['dlq', 'inspect', 'orders', '--where', 'dead_letter.reason == "failed"', '--since', '2025-11-30T08:02:00Z', '--list', '-b', broker, '--json'])).stdout)
  assert.equal(report.scanned, 4)
  assert.deepEqual((report.messages as Array<{id: string}>).map((m) => m.id), ['4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa002', '4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa004'])
  assert.equal((report.groups as Array<{count: number}>).reduce((sum, g) => sum + g.count, 0), 2)
  const none = await runBq(['dlq', 'inspect', 'orders', '--until', '2000-01-01', '-b', broker])
  assert.equal(none.code, 0, none.stderr)
  assert.match(none.stdout, /^none of the 4 message\(s\) examined in orders\.dlq .* match failed_at until 2000-01-01T00:00:00\.000Z\n$/)
})
