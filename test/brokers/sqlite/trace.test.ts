/**
 * `bq trace` on the embedded store (the shared trace suite): a drain session of the test's own
 * holds the trace's first row reserved, as bq's own consumers (redrive, purge) do.
 */
import assert from 'node:assert/strict'
import {randomUUID} from 'node:crypto'
import {mkdtempSync, rmSync} from 'node:fs'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, describe, test} from 'node:test'

import type BetterSqlite3 from 'better-sqlite3'

import {openSqliteAdapter} from '../../../src/lib/brokers/sqlite/index.js'
import {uniqueQueue} from '../../support/brokers.js'
import {jsonOutput, runBq, startBq} from '../../support/cli.js'
import {hasScript, onTerminal} from '../../support/terminal.js'
import {traceSuite, type HeldWork} from '../../suites/trace-suite.js'

const dir = mkdtempSync(path.join(tmpdir(), 'bq-trace-sqlite-'))
after(() => rmSync(dir, {recursive: true, force: true}))
const file = path.join(dir, 'queues.db')
const secondFile = path.join(dir, 'second.db')

async function hold(queue: string, count: number): Promise<HeldWork> {
  const adapter = openSqliteAdapter(file, `sqlite://${file}`)
  const session = await adapter.drain(queue)
  const held = await session.next(count)
  assert.equal(held.length, count, 'rows reserved')
  return {
    async release() {
      await session.release(held)
      await session.close()
      await adapter.close()
    },
  }
}

/** Every row of these queues in both stores, reservations included: what a read must leave as it was. */
async function snapshot(queues: string[]): Promise<unknown> {
  const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3
  const rows: unknown[] = []
  for (const store of [file, secondFile]) {
    const db = new Database(store, {readonly: true})
    try {
      rows.push(db.prepare(`SELECT id, queue, body, headers, available_at, reserved_by FROM messages WHERE queue IN (${queues.map(() => '?').join(', ')}) ORDER BY id`).all(...queues))
    } finally {
      db.close()
    }
  }
  return rows
}

traceSuite({
  name: 'embedded sqlite',
  url: () => `sqlite://${file}`,
  secondUrl: () => `sqlite://${secondFile}`,
  available: async () => true,
  hold,
  heldPlace: 'reserved',
  snapshot,
})

describe('bq trace --follow on the embedded store', () => {
  test('prints each new copy as it appears, and ends on SIGINT with exit 130', async () => {
    const url = `sqlite://${file}`
    const queue = uniqueQueue('trace-follow')
    const traceId = randomUUID()
    const first = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--trace-id', traceId, '-b', url])
    assert.equal(first.code, 0, first.stderr)
    const {child, done} = startBq(['trace', traceId, '-b', url, '--queue', `${queue}*`, '--follow', '--jsonl'])
    let out = ''
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')))
    const lines = () => out.split('\n').filter((line) => line !== '')
    const waitFor = async (count: number) => {
      const until = Date.now() + 15_000
      while (lines().length < count && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 100))
      assert.equal(lines().length, count, out)
    }
    await waitFor(1)
    const moved = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', `${queue}.dlq`, '--trace-id', traceId, '-b', url])
    assert.equal(moved.code, 0, moved.stderr)
    await waitFor(2)
    assert.equal((JSON.parse(lines()[1]) as {meta: {id: string}}).meta.id, moved.stdout.trim())
    child.kill('SIGINT')
    const result = await done
    assert.equal(result.code, 130, result.stderr)
    assert.match(result.stderr, /stopped following/)
  })
})

describe('bq trace limits on the embedded store', () => {
  test('--max-scan stops each place at that many messages, and the report names the places cut short', async () => {
    const url = `sqlite://${file}`
    const queue = uniqueQueue('trace-cap')
    const traceId = randomUUID()
    assert.equal((await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--trace-id', traceId, '-b', url])).code, 0)
    assert.equal((await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--count', '4', '-b', url])).code, 0)
    const last = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--trace-id', traceId, '-b', url])
    const [capped, table] = await Promise.all([
      runBq(['trace', traceId, '-b', url, '--queue', queue, '--max-scan', '3', '--json']),
      runBq(['trace', traceId, '-b', url, '--queue', queue, '--max-scan', '3']),
    ])
    assert.equal(capped.code, 0, capped.stderr)
    const result = jsonOutput(capped.stdout).result as {sightings: Array<{id: string}>; cut_short: Array<{queue: string; state: string; scanned: number; why: string}>}
    assert.equal(result.sightings.length, 1, 'the copy past the cap is not seen')
    assert.ok(!result.sightings.some((s) => s.id === last.stdout.trim()))
    assert.deepEqual(result.cut_short, [{queue, state: 'waiting', scanned: 3, why: 'max-scan', context: null, broker: url}])
    assert.match(table.stderr, new RegExp(`cut short: ${queue} \\(waiting, .*\\) after 3 message\\(s\\): reached --max-scan`))
  })
})

describe('bq trace on a terminal', () => {
  test('a progress line per place on stderr, taken off the screen before the table', {skip: !hasScript && 'util-linux script is not installed'}, async () => {
    const url = `sqlite://${file}`
    const queue = uniqueQueue('trace-tty')
    const traceId = randomUUID()
    assert.equal((await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--count', '3', '--trace-id', traceId, '-b', url])).code, 0)
    const {code, screen} = await onTerminal(['trace', traceId, '-b', url, '--queue', queue], {env: {XDG_CONFIG_HOME: dir}})
    assert.equal(code, 0, screen)
    assert.match(screen, new RegExp(`read in ${queue} \\(waiting\\)`), 'the progress line names the place')
    assert.match(screen, /3 copy\(ies\) of/)
  })
})

describe('bq trace --all-contexts', () => {
  test('reads every defined context, protected ones included, and says which', async () => {
    const config = mkdtempSync(path.join(tmpdir(), 'bq-trace-contexts-'))
    const env = {XDG_CONFIG_HOME: config}
    const queue = uniqueQueue('trace-all')
    const traceId = randomUUID()
    const stores = ['one', 'two'].map((name) => `sqlite://${path.join(dir, `${name}-${queue}.db`)}`)
    for (const [i, url] of stores.entries()) {
      assert.equal((await runBq(['context', 'add', `c${i}`, '-b', url, ...(i === 1 ? ['--protected'] : [])], {env})).code, 0)
      assert.equal((await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--trace-id', traceId, '-b', url])).code, 0)
    }
    const run = await runBq(['trace', traceId, '--all-contexts', '--json'], {env})
    rmSync(config, {recursive: true, force: true})
    assert.equal(run.code, 0, run.stderr)
    assert.match(run.stderr, /bq: trace reads context c0, c1 \(protected\)/)
    const sightings = (jsonOutput(run.stdout).result as {sightings: Array<{context: string}>}).sightings
    assert.deepEqual(sightings.map((s) => s.context).sort(), ['c0', 'c1'])
  })
})
