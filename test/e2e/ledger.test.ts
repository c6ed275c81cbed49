/**
 * The run ledger and `bq dlq ls` edges through the built bin/run.js on the embedded store: the
 * ledger in the default place (the embedded store's file), secrets and data kept out of it, a
 * ledger that cannot be written never failing the run, `runs` on an empty ledger, and the
 * usage errors of dlq ls. The per-broker behaviour is in test/suites/command-suite.ts.
 */
import {after, before, describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {hasStackTrace, jsonOutput, jsonResult, runBq} from '../support/cli.js'
import type {CliResult} from '../support/cli.js'

let dir: string
/** The default embedded store, and with it the default ledger, inside the temp dir. */
let env: NodeJS.ProcessEnv

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-ledger-'))
  env = {XDG_DATA_HOME: dir, BQ_BROKER: '', BQ_LEDGER: ''}
})
after(() => rmSync(dir, {recursive: true, force: true}))

function bq(args: string[], extraEnv: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return runBq(args, {env: {...env, ...extraEnv}})
}

describe('the run ledger', () => {
  test('runs list and show on a ledger that does not exist yet: empty, and a one-line run-not-found', async () => {
    const empty = await bq(['runs', 'list', '--json'], {XDG_DATA_HOME: path.join(dir, 'nowhere')})
    assert.deepEqual(jsonResult(empty.stdout), {runs: []})
    const missing = await bq(['runs', 'show', 'feedbeef'], {XDG_DATA_HOME: path.join(dir, 'nowhere')})
    assert.equal(missing.code, 1)
    assert.match(missing.stderr, /^Error: no run feedbeef in the run ledger .*\n$/)
  })

  test('a publish is recorded in the embedded store\'s file, its data by size only; a dry run is not recorded', async () => {
    const published = await bq(['publish', 'urn:babel:orders:created', '-d', '{"card":"4111111111111111"}', '-q', 'orders', '--reason', 'smoke test', '--json'])
    assert.equal(published.code, 0, published.stderr)
    const runId = jsonResult(published.stdout).run_id as string
    const ids = jsonResult(published.stdout).ids as string[]
    await bq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', 'orders', '--dry-run'])
    const listed = jsonResult((await bq(['runs', 'list', '--json'])).stdout).runs as Array<Record<string, unknown>>
    assert.equal(listed.length, 1, 'the dry run is not recorded')
    const shown = jsonResult((await bq(['runs', 'show', runId, '--json'])).stdout)
    assert.equal(shown.command, 'publish')
    assert.equal(shown.reason, 'smoke test')
    assert.equal(shown.target, 'orders')
    assert.deepEqual(shown.ids, {published: ids})
    assert.deepEqual(shown.counts, {published: 1})
    assert.equal(shown.broker, `sqlite://${path.join(dir, 'bq', 'queues.db')}`)
    assert.match(shown.command_line as string, /^publish urn:babel:orders:created -d '<27 bytes>' -q orders/)
    assert.doesNotMatch(shown.command_line as string, /4111/)
    const human = await bq(['runs', 'show', runId.slice(0, 8)])
    assert.match(human.stdout, /^reason: +smoke test$/m)
    assert.match(human.stdout, /^published: +1 id \(--ids lists them\)$/m)
    const withIds = await bq(['runs', 'show', runId.slice(0, 8), '--ids'])
    assert.match(withIds.stdout, /^published \(1\):\n {2}[0-9a-f-]{36}$/m)
  })

  test('a URL password never reaches the ledger', async () => {
    const url = `sqlite://${path.join(dir, 'other.db')}?password=hunter2-secret`
    const result = await bq(['dlq', 'recover', 'orders', '-b', url, '--json'])
    // The embedded store takes no password parameter: whatever it says, the ledger must not echo it.
    const runs = jsonResult((await bq(['runs', 'list', '--json'])).stdout).runs as Array<{command_line: string; broker: string}>
    for (const run of runs) assert.doesNotMatch(`${run.command_line} ${run.broker}`, /hunter2/, result.stdout)
  })

  test('a ledger that cannot be written is a warning: the run still succeeds', async () => {
    const result = await bq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', 'orders', '--json'], {BQ_LEDGER: '/proc/bq-cannot-write/ledger.db'})
    assert.equal(result.code, 0, result.stderr)
    const output = jsonOutput(result.stdout)
    assert.ok(output.ok)
    assert.match(output.warnings.join('\n'), /cannot open the run ledger .*this run is not recorded/)
    assert.equal(output.ok && (output.result as {run_id?: string}).run_id, undefined, 'no id of a run the ledger does not hold')
    assert.ok(!hasStackTrace(result.stderr), result.stderr)
  })
})

describe('dlq ls usage', () => {
  test('a --max-age that is not a duration is a usage error (exit 2); no DLQ is an empty listing', async () => {
    const bad = await bq(['dlq', 'ls', '--max-age', '1 hour'])
    assert.equal(bad.code, 2)
    assert.match(bad.stderr, /^Error: --max-age "1 hour": expected a duration such as 90s, 15m, 1h, 2d or 1h30m\n$/)
    const none = await bq(['dlq', 'ls', '-b', `sqlite://${path.join(dir, 'empty.db')}`, '--fail-above', '0'])
    assert.equal(none.code, 0, none.stderr)
    assert.match(none.stdout, /^no dead-letter queues on /)
  })
})
