// @test-uses redis
/**
 * `bq dlq triage`, through the built bin/run.js on a terminal (tmux), on the embedded store and Redis:
 * - pick a group, pick "act on the whole group", redrive: the dry run shows the counts, the
 *   equivalent command is printed, the redrive's own prompt confirms, and the group's messages
 *   move while the other group stays; "quit" then exits 0;
 * - one message: export to a file (the printed peek line), then redrive to a sandbox queue it asks for;
 * - Ctrl-C at a triage prompt exits 130, having changed nothing;
 * - off a terminal, and with --json, it refuses with a one-line usage error (exit 2).
 */
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {redisUrl} from '../suites/command-suite.js'
import {requireBroker, uniqueQueue} from '../support/brokers.js'
import {hasStackTrace, jsonResult, runBq} from '../support/cli.js'
import {repoRoot} from '../support/conformance.js'
import {TmuxBq, hasTmux} from '../support/terminal.js'

// Three messages failed (urn:babel:orders:created), one unknown_urn (urn:babel:orders:refunded).
const exampleText = readFileSync(path.join(repoRoot, 'examples', 'orders.dlq.jsonl'), 'utf8')
let dir: string
let env: NodeJS.ProcessEnv

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-triage-'))
  env = {XDG_DATA_HOME: dir, BQ_BROKER: ''}
})
after(() => rmSync(dir, {recursive: true, force: true}))

/** The example DLQ, its original queue renamed to `queue` so the test owns every queue it touches. */
async function seed(url: string, queue: string): Promise<void> {
  const file = path.join(dir, `${queue}.seed.jsonl`)
  writeFileSync(file, exampleText.replaceAll('"orders"', JSON.stringify(queue)))
  const seeded = await runBq(['replay', file, '--as-is', '--to', `${queue}.dlq`, '--yes', '-b', url], {env})
  assert.equal(seeded.code, 0, seeded.stderr)
}

async function depth(url: string, queue: string): Promise<number> {
  const peek = await runBq(['peek', queue, '-b', url, '--limit', '0', '--json'], {env})
  assert.equal(peek.code, 0, peek.stderr)
  return (jsonResult(peek.stdout).messages as unknown[]).length
}

const brokers: Array<{name: string; url: () => string; available: (t: TestContext) => Promise<boolean>}> = [
  {name: 'embedded store', url: () => `sqlite://${path.join(dir, 'q.db')}`, available: async () => true},
  {name: 'redis', url: () => redisUrl, available: (t) => requireBroker(t, 'Redis', new URL(redisUrl).hostname, Number(new URL(redisUrl).port || 6379))},
]

// Under CI a missing tmux is a failure, never a skip (scripts/services.sh installs it).
const noTmux = process.env.CI === 'true' ? false : 'tmux is not installed'
describe('bq dlq triage', {skip: hasTmux ? false : noTmux}, () => {
  for (const broker of brokers) {
    test(`${broker.name}: pick a group, preview the redrive, see the runbook line, confirm; the group moves; quit exits 0`, async (t) => {
      if (!(await broker.available(t))) return
      const url = broker.url()
      const queue = uniqueQueue('triage')
      await seed(url, queue)
      const session = new TmuxBq(['dlq', 'triage', queue, '-b', url], {env, cwd: dir})
      try {
        await session.waitFor('Pick a group')
        session.keys('Enter') // the largest group first: failed / urn:babel:orders:created (3)
        await session.waitFor('act on the whole group (3 message(s))')
        session.keys('Enter')
        await session.waitFor('redrive to the original queue')
        session.keys('Enter')
        const preview = await session.waitFor('(y/N)')
        assert.match(preview, /dry run: 4 examined: 3 would be moved, 1 not selected/)
        assert.ok(preview.includes(`equivalent command: bq dlq redrive ${queue} --select reason=failed --select urn=urn:babel:orders:created --yes --broker`), preview)
        assert.equal(await depth(url, queue), 0, 'the dry run moved nothing')
        session.keys('y', 'Enter')
        const after = await session.waitFor('Pick a group', {times: 2})
        assert.match(after, /3 moved, 1 not selected/)
        assert.match(after, /1 waiting, 1 group\(s\)/)
        session.keys('Down', 'Enter') // quit
        assert.equal(await session.exitCode(), 0, session.screen())
      } finally {
        session.close()
      }
      assert.equal(await depth(url, queue), 3)
      assert.equal(await depth(url, `${queue}.dlq`), 1)
    })
  }

  test('embedded store: one message exported to a file, then redriven to a sandbox queue it asks for', async () => {
    const url = `sqlite://${path.join(dir, 'q.db')}`
    const queue = uniqueQueue('triage-one')
    const file = path.join(dir, `${queue}.export.jsonl`)
    await seed(url, queue)
    const session = new TmuxBq(['dlq', 'triage', queue, '-b', url], {env, cwd: dir})
    try {
      // Waits on the active prompt ("? …"): inquirer rewrites an answered one as "✔ …".
      const openMessage = async () => {
        await session.waitFor('? Pick a group')
        session.keys('Enter')
        await session.waitFor('? failed / urn:babel:orders:created: page 1')
        session.keys('Down', 'Enter') // the group's first message
        await session.waitFor('? Act on message 4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa001')
      }
      await openMessage()
      session.keys('Down', 'Down', 'Down', 'Down', 'Enter') // export
      await session.waitFor('Export to file')
      session.keys('C-u', file, 'Enter')
      const line = await session.waitFor('Run it?')
      assert.ok(line.includes(`equivalent command: bq peek ${queue}.dlq --all --jsonl --with-headers --where 'meta.id == "4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa001"'`), line)
      session.keys('y', 'Enter')
      await openMessage()
      session.keys('Down', 'Enter') // redrive to a sandbox queue
      await session.waitFor('Sandbox queue name')
      session.keys(`${queue}.sandbox`, 'Enter')
      const preview = await session.waitFor('(y/N)')
      assert.match(preview, /1 would be moved, 3 not selected/)
      assert.ok(preview.includes(`equivalent command: bq dlq redrive ${queue} --to ${queue}.sandbox --select id=4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa001 --yes`), preview)
      session.keys('y', 'Enter')
      await session.waitFor('? Pick a group')
      session.keys('C-c')
      assert.equal(await session.exitCode(), 130, session.screen())
    } finally {
      session.close()
    }
    const exported = readFileSync(file, 'utf8').trim().split('\n')
    assert.equal(exported.length, 1)
    assert.equal((JSON.parse(exported[0]) as {envelope: {meta: {id: string}}}).envelope.meta.id, '4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa001')
    assert.equal(await depth(url, `${queue}.sandbox`), 1)
    assert.equal(await depth(url, `${queue}.dlq`), 3)
  })

  test('Ctrl-C at a triage prompt exits 130 and changes nothing', async () => {
    const url = `sqlite://${path.join(dir, 'q.db')}`
    const queue = uniqueQueue('triage-int')
    await seed(url, queue)
    const session = new TmuxBq(['dlq', 'triage', queue, '-b', url], {env, cwd: dir})
    try {
      await session.waitFor('Pick a group')
      session.keys('C-c')
      assert.equal(await session.exitCode(), 130, session.screen())
    } finally {
      session.close()
    }
    assert.equal(await depth(url, `${queue}.dlq`), 4)
  })

  test('off a terminal, or with --json, it refuses in one line (exit 2) and points at the non-interactive commands', async () => {
    const url = `sqlite://${path.join(dir, 'q.db')}`
    const plain = await runBq(['dlq', 'triage', 'orders', '-b', url], {env})
    assert.equal(plain.code, 2)
    assert.equal(plain.stderr.trim().split('\n').length, 1, plain.stderr)
    assert.match(plain.stderr, /interactive.*bq dlq inspect.*bq dlq redrive/)
    assert.ok(!hasStackTrace(plain.stderr))
    const json = await runBq(['dlq', 'triage', 'orders', '-b', url, '--json'], {env})
    assert.equal(json.code, 2)
    assert.equal((JSON.parse(json.stdout) as {error: {code: string}}).error.code, 'usage')
  })
})
