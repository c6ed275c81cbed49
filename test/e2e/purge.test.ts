// @test-uses redis
/**
 * `bq dlq purge` safety, through the built bin/run.js:
 * - a dry run and an unconfirmed run change nothing and write no file;
 * - an existing backup file is refused (never overwritten), and so is --backup with --no-backup;
 * - the default backup path is printed and created in the working directory;
 * - --no-backup deletes without writing anything;
 * - an envelope the backup line would not restore byte for byte is left in place (exit 3);
 * - replaying a backup restores the exact bytes and the application headers (embedded store, Redis).
 */
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {redisUrl} from '../suites/command-suite.js'
import {requireBroker, uniqueQueue} from '../support/brokers.js'
import {hasStackTrace, jsonOutput, jsonResult, runBq} from '../support/cli.js'
import {repoRoot} from '../support/conformance.js'

const exampleLines = readFileSync(path.join(repoRoot, 'examples', 'orders.dlq.jsonl'), 'utf8').trim().split('\n')
let dir: string
let sqliteUrl: string
let env: NodeJS.ProcessEnv

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-purge-'))
  sqliteUrl = `sqlite://${path.join(dir, 'q.db')}`
  env = {XDG_DATA_HOME: dir, BQ_BROKER: ''}
})
after(() => rmSync(dir, {recursive: true, force: true}))

/** Runs bq in `cwd` (a fresh directory per test, so default backup files can be counted). */
function bq(args: string[], cwd = dir) {
  return runBq(args, {env, cwd})
}

async function seed(url: string, queue: string, lines: string[]): Promise<void> {
  const file = path.join(dir, `${queue}.seed.jsonl`)
  writeFileSync(file, lines.join('\n') + '\n')
  const seeded = await bq(['replay', file, '--as-is', '--to', queue, '--yes', '-b', url])
  assert.equal(seeded.code, 0, seeded.stderr)
}

/** Every message on a queue as `peek --jsonl --with-headers` exports it, plus the raw bodies. */
async function contents(url: string, queue: string): Promise<{bodies: string[]; lines: string[]}> {
  const peek = await bq(['peek', queue, '-b', url, '--limit', '0', '--json'])
  assert.equal(peek.code, 0, peek.stderr)
  const messages = jsonResult(peek.stdout).messages as Array<{body: string; body_encoding: string}>
  const bodies = messages.map((m) => (m.body_encoding === 'base64' ? Buffer.from(m.body, 'base64').toString('utf8') : m.body))
  const exported = await bq(['peek', queue, '-b', url, '--limit', '0', '--jsonl', '--with-headers'])
  assert.equal(exported.code, 0, exported.stderr)
  return {bodies, lines: exported.stdout.trim().split('\n').filter(Boolean)}
}

function freshDir(name: string): string {
  const cwd = path.join(dir, name)
  mkdirSync(cwd)
  return cwd
}

describe('dlq purge on the embedded store', () => {
  test('dry run and a missing --yes change nothing and write no file', async () => {
    const queue = uniqueQueue('purgedry')
    await seed(sqliteUrl, queue, exampleLines)
    const before = await contents(sqliteUrl, queue)
    const cwd = freshDir(queue)
    const dry = await bq(['dlq', 'purge', queue, '--dlq', queue, '--dry-run', '-b', sqliteUrl], cwd)
    assert.equal(dry.code, 0, dry.stderr)
    assert.match(dry.stdout, /^would purge\t4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa001\t/m)
    assert.match(dry.stderr, /dry run: 4 examined: 4 would be purged, 0 not selected, 0 poison, 0 failed/)
    const unconfirmed = await bq(['dlq', 'purge', queue, '--dlq', queue, '-b', sqliteUrl], cwd)
    assert.equal(unconfirmed.code, 2)
    assert.match(unconfirmed.stderr, /after writing them to \.\/.+\.purge-.+\.jsonl: not on a terminal, so nothing was changed; add --yes/)
    assert.deepEqual(readdirSync(cwd), [])
    assert.deepEqual(await contents(sqliteUrl, queue), before)
  })

  test('an existing backup file is refused and kept; --backup with --no-backup is a usage error', async () => {
    const queue = uniqueQueue('purgeexists')
    await seed(sqliteUrl, queue, exampleLines)
    const before = await contents(sqliteUrl, queue)
    const backup = path.join(dir, `${queue}.backup.jsonl`)
    writeFileSync(backup, 'precious\n')
    const refused = await bq(['dlq', 'purge', queue, '--dlq', queue, '--backup', backup, '--yes', '-b', sqliteUrl, '--json'])
    assert.equal(refused.code, 2)
    const output = jsonOutput(refused.stdout)
    assert.ok(!output.ok)
    assert.equal(output.error.code, 'backup-exists')
    assert.match(output.error.message, /already exists: bq never overwrites one/)
    assert.equal(readFileSync(backup, 'utf8'), 'precious\n')
    assert.deepEqual(await contents(sqliteUrl, queue), before)
    const both = await bq(['dlq', 'purge', queue, '--backup', backup, '--no-backup', '--yes', '-b', sqliteUrl])
    assert.equal(both.code, 2)
    assert.ok(!hasStackTrace(both.stderr), both.stderr)
    assert.deepEqual(await contents(sqliteUrl, queue), before)
  })

  test('the default backup is printed and written in the working directory; --no-backup writes nothing', async () => {
    const queue = uniqueQueue('purgedefault')
    await seed(sqliteUrl, queue, exampleLines)
    const cwd = freshDir(queue)
    const run = await bq(['dlq', 'purge', queue, '--dlq', queue, '--max', '2', '--yes', '-b', sqliteUrl], cwd)
    assert.equal(run.code, 0, run.stderr)
    const printed = /^backup: (\.\/\S+\.purge-\d{8}T\d{6}-\d{3}Z\.jsonl) \(restore with: bq replay \S+ --as-is --to \S+\)$/m.exec(run.stderr)
    assert.ok(printed, run.stderr)
    assert.match(run.stderr, /2 examined: 2 purged, 0 not selected, 0 poison, 0 failed/)
    assert.deepEqual(readdirSync(cwd), [path.basename(printed[1])])
    assert.equal(readFileSync(path.join(cwd, printed[1]), 'utf8').trim().split('\n').length, 2)
    const bare = await bq(['dlq', 'purge', queue, '--dlq', queue, '--no-backup', '--yes', '-b', sqliteUrl, '--json'], cwd)
    assert.equal(bare.code, 0, bare.stderr)
    assert.deepEqual((jsonResult(bare.stdout).counts as Record<string, number>).purged, 2)
    assert.equal(jsonResult(bare.stdout).backup, null)
    // The run ledger names the counts as the report does, and lists the ids as deleted.
    const shown = jsonResult((await bq(['runs', 'show', String(jsonResult(bare.stdout).run_id), '--json'])).stdout)
    assert.equal(shown.command, 'dlq purge')
    assert.equal((shown.counts as Record<string, number>).purged, 2)
    assert.equal((shown.ids as {deleted: string[]}).deleted.length, 2)
    assert.deepEqual(readdirSync(cwd), [path.basename(printed[1])])
    assert.deepEqual((await contents(sqliteUrl, queue)).bodies, [])
  })

  test('an envelope a backup line would not restore byte for byte stays, reported as failed (exit 3)', async () => {
    const queue = uniqueQueue('purgespaced')
    const spaced = exampleLines[0].replace('{"job":', '{ "job" : ')
    await seed(sqliteUrl, queue, [spaced, exampleLines[1]])
    const backup = path.join(dir, `${queue}.backup.jsonl`)
    const run = await bq(['dlq', 'purge', queue, '--dlq', queue, '--backup', backup, '--yes', '-b', sqliteUrl, '--json'])
    assert.equal(run.code, 3, run.stderr)
    const result = jsonOutput(run.stdout).result as {counts: Record<string, number>; items: Array<{outcome: string; error?: string}>}
    assert.deepEqual(result.counts, {examined: 2, purged: 1, would_purge: 0, skipped: 0, poison: 0, failed: 1})
    assert.match(result.items.find((item) => item.outcome === 'failed')?.error ?? '', /would not restore byte for byte/)
    assert.deepEqual((await contents(sqliteUrl, queue)).bodies, [spaced])
  })
})

interface Target {
  name: string
  url: () => string
  available: (t: TestContext) => Promise<boolean>
}

const targets: Target[] = [
  {name: 'embedded sqlite', url: () => sqliteUrl, available: async () => true},
  {name: 'redis', url: () => redisUrl, available: (t) => requireBroker(t, 'Redis', new URL(redisUrl).hostname, Number(new URL(redisUrl).port || 6379))},
]

for (const target of targets) {
  describe(`dlq purge backup on ${target.name}`, () => {
    test('replaying the backup restores every purged message byte for byte, with its headers', async (t) => {
      if (!(await target.available(t))) return
      const queue = uniqueQueue('purgerestore')
      const dlq = `${queue}.dlq`
      // Two messages carry application headers, as a --with-headers export line records them.
      const withHeaders = exampleLines.map((line, i) => (i < 2 ? `{"envelope":${line},"headers":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-0${i}","x-tenant":"t${i}"}}` : line))
      await seed(target.url(), dlq, withHeaders)
      const before = await contents(target.url(), dlq)
      assert.match(before.lines[0], /"x-tenant":"t0"/)
      const backup = path.join(dir, `${queue}.backup.jsonl`)
      const run = await bq(['dlq', 'purge', queue, '--backup', backup, '--yes', '-b', target.url()])
      assert.equal(run.code, 0, run.stderr)
      assert.deepEqual((await contents(target.url(), dlq)).bodies, [])
      assert.deepEqual(readFileSync(backup, 'utf8').trim().split('\n'), before.lines)
      const restored = await bq(['replay', backup, '--as-is', '--to', dlq, '--yes', '-b', target.url()])
      assert.equal(restored.code, 0, restored.stderr)
      assert.deepEqual(await contents(target.url(), dlq), before)
    })
  })
}
