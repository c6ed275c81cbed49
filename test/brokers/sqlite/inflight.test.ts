/**
 * `bq inflight ls` on the embedded store: a drain of the test's own (the store's one consumer
 * model: rows reserved by a session) holds rows; bq reads them, envelopes and all.
 */
import assert from 'node:assert/strict'
import {spawnSync} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, describe, test} from 'node:test'
import {pathToFileURL} from 'node:url'

import {openSqliteAdapter} from '../../../src/lib/brokers/sqlite/index.js'
import {uniqueQueue} from '../../support/brokers.js'
import {jsonOutput, runBq} from '../../support/cli.js'
import {repoRoot} from '../../support/conformance.js'
import {gaugeSum, inflightSuite, type HeldWork, type InflightJson} from '../../suites/inflight-suite.js'

const dir = mkdtempSync(path.join(tmpdir(), 'bq-inflight-sqlite-'))
after(() => rmSync(dir, {recursive: true, force: true}))
const file = path.join(dir, 'queues.db')
const url = `sqlite://${file}`

/** Reserves `count` rows with a drain session, as bq's own consumers (redrive, purge) do, and acknowledges none. */
async function hold(queue: string, count: number): Promise<HeldWork> {
  const adapter = openSqliteAdapter(file, url)
  const session = await adapter.drain(queue)
  const held = await session.next(count)
  assert.equal(held.length, count, 'rows reserved')
  return {
    async release() {
      await session.ack(held)
      await session.close()
      await adapter.close()
    },
  }
}

inflightSuite({name: 'embedded sqlite', url: () => url, available: async () => true, hold, heldGauge: 'reserved', elementPlace: 'reserved', queuesExist: false})

async function listing(queue: string, extra: string[] = []): Promise<InflightJson & {elements: Array<{due_at: string | null}>}> {
  const result = await runBq(['inflight', 'ls', queue, '-b', url, ...extra, '--json'])
  assert.equal(result.code, 0, result.stderr)
  const output = jsonOutput(result.stdout)
  assert.ok(output.ok)
  return output.result as never
}

describe('inflight ls on the embedded store: delayed rows, a dead drain, the limit', () => {
  test('delayed rows show with their due time, after the reserved ones; --limit caps the elements, not the counts', async () => {
    const queue = uniqueQueue('inflight-delay')
    const published = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--count', '2', '--delay', '600000', '-b', url])
    assert.equal(published.code, 0, published.stderr)
    const shown = await listing(queue)
    assert.deepEqual(shown.gauges.map((g) => [g.name, g.value]), [['reserved', 0], ['delayed', 2]])
    assert.deepEqual(shown.elements.map((e) => e.place), ['delayed', 'delayed'])
    for (const element of shown.elements) assert.ok(element.due_at !== null && Date.parse(element.due_at) > Date.now() + 500_000, String(element.due_at))
    assert.equal(shown.counts_only, null)
    const capped = await listing(queue, ['--limit', '1'])
    assert.equal(capped.elements.length, 1)
    assert.equal(gaugeSum(capped, 'delayed'), 2)
  })

  test('rows a killed drain reserved stay in flight until bq dlq recover returns them', async () => {
    const queue = uniqueQueue('inflight-dead')
    assert.equal((await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--count', '3', '-b', url])).code, 0)
    // A process that reserves two rows and exits without ending its drain, as a SIGKILL would leave it.
    const script = path.join(dir, 'reserve-and-exit.mts')
    const adapterModule = pathToFileURL(path.join(repoRoot, 'src/lib/brokers/sqlite/index.ts')).href
    writeFileSync(script, `import {openSqliteAdapter} from ${JSON.stringify(adapterModule)}\nconst session = await openSqliteAdapter(${JSON.stringify(file)}, 'x').drain(${JSON.stringify(queue)})\nawait session.next(2)\nprocess.exit(0)\n`)
    const child = spawnSync(process.execPath, ['--import', 'tsx', script], {encoding: 'utf8'})
    assert.equal(child.status, 0, child.stderr)
    const stuck = await listing(queue)
    assert.equal(gaugeSum(stuck, 'reserved'), 2)
    assert.equal(stuck.elements.length, 2)
    assert.match(stuck.returns_itself ?? '', /stay reserved until the next drain of the queue on the same host/)
    const recovered = await runBq(['dlq', 'recover', queue, '--dlq', queue, '-b', url])
    assert.equal(recovered.code, 0, recovered.stderr)
    assert.equal(gaugeSum(await listing(queue), 'reserved'), 0)
  })
})
