// @test-uses redis
/**
 * Every command's --json output has one shape (docs/output-and-exit-codes.md), on success and on failure:
 *
 *   {"ok": true,  "result": {...}, "warnings": [...]}
 *   {"ok": false, "error": {"code", "message", "exit_code"}, "result"?: {...}, "warnings": [...]}
 *
 * A run through a named context adds a last `context` key (test/e2e/contexts.test.ts); these runs
 * use none (test/support/cli.ts isolates the contexts file), so the keys are exactly the above.
 *
 * `ok` is true exactly when the exit code is 0, `error.exit_code` is the exit code, and warnings
 * (such as an export that stopped at the default --limit) land in `warnings`.
 */
import {after, before, describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {requireBroker, uniqueQueue} from '../support/brokers.js'
import {hasStackTrace, jsonOutput, runBq} from '../support/cli.js'
import type {JsonOutput} from '../support/cli.js'
import {repoRoot} from '../support/conformance.js'

const redisUrl = process.env.BQ_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0'
const exampleDlq = path.join(repoRoot, 'examples', 'orders.dlq.jsonl')
const firstDeadLetter = readFileSync(exampleDlq, 'utf8').split('\n')[0]
let dir: string
let url: string
let env: NodeJS.ProcessEnv

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-json-'))
  url = `sqlite://${path.join(dir, 'q.db')}`
  env = {XDG_DATA_HOME: dir, BQ_BROKER: ''}
})
after(() => rmSync(dir, {recursive: true, force: true}))

/** Runs a command with --json and checks the envelope against its exit code. */
async function jsonRun(args: string[], options: {stdin?: string} = {}): Promise<{code: number; output: JsonOutput}> {
  const result = await runBq([...args, '--json'], {env, ...options})
  assert.ok(!hasStackTrace(result.stderr), result.stderr)
  const output = jsonOutput(result.stdout)
  assert.ok(Array.isArray(output.warnings) && output.warnings.every((w) => typeof w === 'string'), result.stdout)
  if (output.ok) {
    assert.equal(result.code, 0, result.stdout)
    assert.deepEqual(Object.keys(output), ['ok', 'result', 'warnings'])
    assert.equal(typeof output.result, 'object')
  } else {
    assert.notEqual(result.code, 0)
    assert.deepEqual(Object.keys(output), output.result === undefined ? ['ok', 'error', 'warnings'] : ['ok', 'error', 'result', 'warnings'])
    assert.deepEqual(Object.keys(output.error), ['code', 'message', 'exit_code'])
    assert.equal(typeof output.error.code, 'string')
    assert.equal(typeof output.error.message, 'string')
    assert.equal(output.error.exit_code, result.code)
  }
  return {code: result.code, output}
}

function failure(output: JsonOutput): {code: string; message: string; exit_code: number} {
  assert.equal(output.ok, false, JSON.stringify(output))
  return output.ok ? {code: '', message: '', exit_code: 0} : output.error
}

describe('--json has one envelope on every command', () => {
  const down = 'redis://127.0.0.1:1'

  test('publish', async () => {
    const ok = await jsonRun(['publish', 'urn:babel:orders:created', '-d', '{"order_id":1}', '-q', 'orders', '-b', url])
    assert.equal(ok.output.ok && (ok.output.result.ids as string[]).length, 1)
    const dry = await jsonRun(['publish', 'urn:babel:orders:created', '-d', '{"order_id":1}', '--dry-run'])
    assert.equal(dry.output.ok && dry.output.result.dry_run, true)
    assert.deepEqual(failure((await jsonRun(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', 'orders', '-b', down])).output), {code: 'connection', exit_code: 4, message: 'cannot connect to redis://127.0.0.1:1: connection refused'})
  })

  test('peek', async () => {
    const ok = await jsonRun(['peek', 'orders', '-b', url])
    assert.equal(ok.output.ok && ok.output.result.depth, 1)
    assert.equal(failure((await jsonRun(['peek', 'orders', '-b', down])).output).exit_code, 4)
    assert.equal(failure((await jsonRun(['peek', 'orders', '--limit', '-1', '-b', url])).output).code, 'usage')
  })

  test('replay', async () => {
    const ok = await jsonRun(['replay', exampleDlq, '--as-is', '--to', 'orders.dlq', '--yes', '-b', url])
    assert.deepEqual(ok.output.ok && ok.output.result.counts, {examined: 4, redriven: 4, would_redrive: 0, skipped: 0, poison: 0, failed: 0})
    assert.equal(failure((await jsonRun(['replay', exampleDlq, '--to', 'x', '--yes', '-b', url, '--to-broker', down])).output).exit_code, 4)
    assert.equal(failure((await jsonRun(['replay', exampleDlq, '--to', 'x', '-b', url])).output).code, 'confirmation-needed')
  })

  test('dlq inspect', async () => {
    const ok = await jsonRun(['dlq', 'inspect', 'orders', '-b', url])
    assert.equal(ok.output.ok && ok.output.result.depth, 4)
    assert.equal(failure((await jsonRun(['dlq', 'inspect', 'orders', '-b', down])).output).exit_code, 4)
  })

  test('dlq redrive, including a partial run that carries its report', async () => {
    const dry = await jsonRun(['dlq', 'redrive', 'orders', '--dry-run', '-b', url])
    assert.equal(dry.output.ok && (dry.output.result.counts as {would_redrive: number}).would_redrive, 4)
    assert.equal(failure((await jsonRun(['dlq', 'redrive', 'orders', '-b', url])).output).code, 'confirmation-needed')
    const nowhere = path.join(dir, 'nowhere.jsonl')
    writeFileSync(nowhere, firstDeadLetter.replace('"queue":"orders",', '').replace('"original_queue":"orders",', '') + '\n')
    assert.equal((await jsonRun(['replay', nowhere, '--as-is', '--to', 'orders.dlq', '--yes', '-b', url])).code, 0)
    const partial = await jsonRun(['dlq', 'redrive', 'orders', '--yes', '-b', url])
    assert.equal(failure(partial.output).code, 'partial')
    const report = partial.output.result as {counts: {redriven: number; failed: number}; items: unknown[]}
    assert.deepEqual([report.counts.redriven, report.counts.failed, report.items.length], [4, 1, 5])
  })

  test('dlq recover', async () => {
    const ok = await jsonRun(['dlq', 'recover', 'orders', '-b', url])
    assert.equal(ok.output.ok && ok.output.result.recovered, 0)
    assert.equal(failure((await jsonRun(['dlq', 'recover', 'orders', '-b', down])).output).exit_code, 4)
  })

  test('validate', async () => {
    const good = path.join(dir, 'good.jsonl')
    writeFileSync(good, firstDeadLetter + '\n')
    const ok = await jsonRun(['validate', good])
    assert.deepEqual(ok.output.ok && ok.output.result, {summary: {inputs: 1, messages: 1, valid: 1, invalid: 0, errors: 0, warnings: 0}, results: []})
    const bad = path.join(dir, 'bad.json')
    writeFileSync(bad, '{"job":1}')
    const invalid = await jsonRun(['validate', bad])
    assert.equal(failure(invalid.output).code, 'invalid-input')
    assert.equal((invalid.output.result as {summary: {invalid: number}}).summary.invalid, 1)
    assert.equal(failure((await jsonRun(['validate'])).output).code, 'usage')
  })

  test('an unknown flag and an unexpected argument', async () => {
    assert.equal(failure((await jsonRun(['dlq', 'inspect', 'orders', '--bogus'])).output).code, 'usage')
    assert.equal(failure((await jsonRun(['peek', 'a', 'b'])).output).code, 'usage')
  })
})

describe('warnings under --json', () => {
  test('a warning lands in warnings: an export that stopped at the default --limit', async () => {
    const queue = uniqueQueue('json-warn')
    for (let i = 0; i < 3; i++) assert.equal((await jsonRun(['replay', exampleDlq, '--as-is', '--to', queue, '--yes', '-b', url])).code, 0)
    const partial = await jsonRun(['peek', queue, '-b', url])
    assert.equal(partial.output.ok, true)
    assert.equal(partial.output.warnings.length, 1)
    assert.match(partial.output.warnings[0], /the export is partial: it stopped at the default --limit 10/)
  })

  test('--bypass on Redis rides the SDK frame: no warning, on success and on failure', async (t) => {
    if (!(await requireBroker(t, 'Redis', new URL(redisUrl).hostname, Number(new URL(redisUrl).port || 6379)))) return
    const queue = uniqueQueue('json-warn')
    const ok = await jsonRun(['dlq', 'redrive', queue, '--bypass', '--dry-run', '-b', redisUrl])
    assert.equal(ok.output.ok, true)
    // The DLQ was never created: that is noted, and nothing else.
    assert.deepEqual(ok.output.warnings.filter((w) => !w.startsWith(`no queue ${queue}.dlq `)), [])
    const refused = await jsonRun(['replay', exampleDlq, '--to', queue, '--bypass', '-b', redisUrl])
    assert.equal(failure(refused.output).code, 'confirmation-needed')
    assert.deepEqual(refused.output.warnings, [])
  })
})
