// @test-uses rabbitmq redis
/**
 * Edit and resubmit, through the built bin/run.js, with $EDITOR set to a command that rewrites
 * the file (no terminal needed):
 * - `dlq edit` on the embedded store, Redis and RabbitMQ: the edited copy reaches the original
 *   queue reset like a redrive, differing from the original only where the data was edited; the
 *   rest of the DLQ stays byte-exact;
 * - on the embedded store: every abort (unchanged file, failing editor, emptied file, invalid JSON
 *   with its line and column, data the registry refuses, an unknown id) changes nothing; a dry run
 *   prints the bytes it would send;
 * - `dlq redrive --patch --dry-run` shows the patched bytes of a sample and moves nothing; a patch
 *   that writes where the reset owns is a usage error.
 */
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {decode, resetForRedrive} from '../../src/lib/envelope/index.js'
import {amqpUrl, redisUrl} from '../suites/command-suite.js'
import {requireBroker, uniqueQueue} from '../support/brokers.js'
import {hasStackTrace, jsonOutput, jsonResult, runBq} from '../support/cli.js'
import {repoRoot} from '../support/conformance.js'

const exampleLines = readFileSync(path.join(repoRoot, 'examples', 'orders.dlq.jsonl'), 'utf8').trim().split('\n')
const registry = path.join(repoRoot, 'examples', 'registry.json')
const FIRST = '4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa001'
let dir: string
let sqliteUrl: string
let env: NodeJS.ProcessEnv

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-edit-e2e-'))
  sqliteUrl = `sqlite://${path.join(dir, 'q.db')}`
  env = {XDG_DATA_HOME: dir, BQ_BROKER: '', VISUAL: ''}
})
after(() => rmSync(dir, {recursive: true, force: true}))

function bq(args: string[], editor = 'true') {
  return runBq(args, {env: {...env, EDITOR: editor}})
}

/** A DLQ holding the example dead letters, their original queue renamed to `queue`. */
async function seed(url: string, queue: string): Promise<string[]> {
  const lines = exampleLines.map((line) => line.replaceAll('"original_queue":"orders"', `"original_queue":${JSON.stringify(queue)}`))
  const file = path.join(dir, `${queue}.jsonl`)
  writeFileSync(file, lines.join('\n') + '\n')
  const seeded = await bq(['replay', file, '--as-is', '--to', `${queue}.dlq`, '--yes', '-b', url])
  assert.equal(seeded.code, 0, seeded.stderr)
  return lines
}

/** Every body on a queue, exactly as stored, sorted (order is not what these tests are about). */
async function bodies(url: string, queue: string): Promise<string[]> {
  const peek = await bq(['peek', queue, '-b', url, '--limit', '100', '--json'])
  const output = jsonOutput(peek.stdout)
  if (!output.ok && output.error.code === 'queue-not-found') return []
  return (jsonResult(peek.stdout).messages as Array<{body: string}>).map((m) => m.body).sort()
}

/** An editor that replaces `from` with `to` in the file it is given. */
function replacing(from: string, to: string): string {
  const script = path.join(dir, `editor-${Math.random().toString(36).slice(2)}.mjs`)
  writeFileSync(script, `import {readFileSync, writeFileSync} from 'node:fs'\nconst file = process.argv[2]\nwriteFileSync(file, readFileSync(file, 'utf8').replace(${JSON.stringify(from)}, ${JSON.stringify(to)}))\n`)
  return `"${process.execPath}" "${script}"`
}

const targets = [
  {name: 'embedded sqlite', url: () => sqliteUrl, available: async () => true},
  {name: 'redis', url: () => redisUrl, available: (t: TestContext) => requireBroker(t, 'Redis', new URL(redisUrl).hostname, Number(new URL(redisUrl).port || 6379))},
  {name: 'rabbitmq', url: () => amqpUrl, available: (t: TestContext) => requireBroker(t, 'RabbitMQ', new URL(amqpUrl).hostname, Number(new URL(amqpUrl).port || 5672))},
]

describe('dlq edit resubmits the edited message', () => {
  for (const target of targets) {
    test(`${target.name}: only the edited value changes; the original leaves the DLQ; the others stay byte-exact`, async (t) => {
      if (!(await target.available(t))) return
      const queue = uniqueQueue('edit')
      const lines = await seed(target.url(), queue)
      const run = await bq(['dlq', 'edit', queue, '--id', FIRST, '--yes', '--json', '-b', target.url()], replacing('"amount_cents": 12990', '"amount_cents": 100'))
      assert.equal(run.code, 0, run.stderr)
      const expected = resetForRedrive(decode(lines[0].replace('"amount_cents":12990', '"amount_cents":100'))).text
      const {run_id: runId, ...result} = jsonResult(run.stdout)
      assert.deepEqual(result, {dlq: `${queue}.dlq`, id: FIRST, target: queue, dry_run: false, envelope: expected, resubmitted: true})
      // The resubmission is in the run ledger, with the id it resubmitted.
      const shown = jsonResult((await bq(['runs', 'show', String(runId), '--json'])).stdout)
      assert.equal(shown.command, 'dlq edit')
      assert.deepEqual(shown.ids, {resubmitted: [FIRST]})
      assert.deepEqual(await bodies(target.url(), queue), [expected])
      assert.deepEqual(await bodies(target.url(), `${queue}.dlq`), lines.slice(1).sort())
    })
  }
})

describe('dlq edit changes nothing unless an edit is resubmitted (embedded store)', () => {
  test('unchanged, failing editor, emptied file, invalid JSON, registry refusal, unknown id, dry run', async () => {
    const queue = uniqueQueue('edit-abort')
    const lines = await seed(sqliteUrl, queue)
    const edit = (editor: string, ...extra: string[]) => bq(['dlq', 'edit', queue, ...(extra.includes('--id') ? [] : ['--id', FIRST]), '--yes', '-b', sqliteUrl, ...extra], editor)
    const expectations: Array<[string, string[], number, RegExp]> = [
      ['true', [], 2, /edit aborted: the file was left unchanged; nothing was changed/],
      ['false', [], 2, /edit aborted: the editor \(false\) exited with status 1; nothing was changed/],
      [replacing('"order_id": 5001,', '"order_id": 5001'), [], 2, /not valid JSON: .* at line 3 column 3; nothing was changed\. Your edit is kept in /],
      [replacing('"amount_cents": 12990', '"amount_cents": "cheap"'), ['--registry', registry], 1, /does not match the schema for urn:babel:orders:created: \$\.data\.amount_cents .*nothing was changed/],
      [replacing('12990', '1'), ['--id', 'no-such-id'], 1, /no message with meta\.id no-such-id on .*nothing was changed/],
    ]
    for (const [editor, extra, code, message] of expectations) {
      const result = await edit(editor, ...extra)
      assert.equal(result.code, code, `${editor}: ${result.stderr}`)
      assert.match(result.stderr, message)
      assert.ok(!hasStackTrace(result.stderr), result.stderr)
    }
    const emptied = await bq(['dlq', 'edit', queue, '--id', FIRST, '--yes', '-b', sqliteUrl], `sh -c ': > "$0"'`)
    assert.equal(emptied.code, 2, emptied.stderr)
    assert.match(emptied.stderr, /the file was emptied/)
    const dry = await edit(replacing('"currency": "EUR"', '"currency": "USD"'), '--dry-run')
    assert.equal(dry.code, 0, dry.stderr)
    assert.equal(dry.stdout, resetForRedrive(decode(lines[0].replace('"currency":"EUR"', '"currency":"USD"'))).text + '\n')
    const notConfirmed = await bq(['dlq', 'edit', queue, '--id', FIRST, '-b', sqliteUrl], replacing('12990', '1'))
    assert.equal(notConfirmed.code, 2)
    assert.match(notConfirmed.stderr, /add --yes/)
    assert.deepEqual(await bodies(sqliteUrl, `${queue}.dlq`), [...lines].sort())
    assert.deepEqual(await bodies(sqliteUrl, queue), [])
  })
})

describe('dlq redrive --patch (embedded store)', () => {
  test('a dry run shows the patched bytes of a sample and moves nothing; writing where the reset owns is refused', async () => {
    const queue = uniqueQueue('patch-dry')
    const lines = await seed(sqliteUrl, queue)
    const patch = path.join(dir, 'currency.json')
    writeFileSync(patch, '[{"op":"add","path":"/data/currency","value":"USD"}]')
    const dry = await bq(['dlq', 'redrive', queue, '--patch', patch, '--dry-run', '-b', sqliteUrl])
    assert.equal(dry.code, 0, dry.stderr)
    const sample = dry.stdout.split('\n').filter((line) => line.startsWith('    ')).map((line) => line.trim())
    assert.equal(sample.length, 3)
    assert.equal(sample[0], resetForRedrive(decode(lines[0].replace('"currency":"EUR"', '"currency":"USD"'))).text)
    assert.deepEqual(await bodies(sqliteUrl, `${queue}.dlq`), [...lines].sort())

    writeFileSync(patch, '[{"op":"remove","path":"/dead_letter"}]')
    const refused = await bq(['dlq', 'redrive', queue, '--patch', patch, '--yes', '-b', sqliteUrl])
    assert.equal(refused.code, 2)
    assert.match(refused.stderr, /writes outside \/data and \/meta\/\.\.\. \(the redrive reset owns it\); nothing was changed/)
    assert.deepEqual(await bodies(sqliteUrl, `${queue}.dlq`), [...lines].sort())
  })
})
