/**
 * Schema patterns run in linear time, end to end through bin/run.js: `^(a+)+$` against a
 * 41-character value (catastrophic for a backtracking engine) answers at once in validate,
 * publish --registry and schema compat --sample; a pattern needing backtracking is refused in one
 * line; a publish stays interruptible.
 */
import {after, before, describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {hasStackTrace, runBq, startBq} from '../support/cli.js'

const URN = 'urn:babel:tests:evil'
const evil = 'a'.repeat(40) + '!'
const fine = 'a'.repeat(41)
const QUICK_MS = 15_000

let dir: string
const file = (name: string) => path.join(dir, name)
const write = (name: string, value: unknown): string => {
  writeFileSync(file(name), typeof value === 'string' ? value : JSON.stringify(value))
  return file(name)
}

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-schema-regex-'))
  write('evil.json', {type: 'object', required: ['name'], properties: {name: {type: 'string', pattern: '^(a+)+$'}}, patternProperties: {'^(b+)+$': {type: 'integer'}}})
  write('open.json', {type: 'object', required: ['name'], properties: {name: {type: 'string'}}})
  write('registry.json', {schemas: [{urn: URN, schema: 'evil.json'}]})
  write('look.json', {type: 'object', properties: {name: {type: 'string', pattern: '^(?!x)a+$'}}})
  write('look-registry.json', {schemas: [{urn: URN, schema: 'look.json'}]})
  write('bad.json', {name: evil})
  write('good.json', {name: fine})
})
after(() => rmSync(dir, {recursive: true, force: true}))

const timed = async (args: string[]) => {
  const started = Date.now()
  const result = await runBq(args, {timeoutMs: QUICK_MS})
  return {...result, ms: Date.now() - started}
}

describe('schema patterns match in linear time', () => {
  test('validate: the 41-character value is invalid, the all-a one valid, quickly', async () => {
    const bad = await timed(['validate', '--registry', file('registry.json'), '--urn', URN, file('bad.json')])
    assert.equal(bad.code, 1, bad.stdout + bad.stderr)
    assert.match(bad.stdout, /must match pattern "\^\(a\+\)\+\$"/)
    const good = await timed(['validate', '--registry', file('registry.json'), '--urn', URN, file('good.json')])
    assert.equal(good.code, 0, good.stdout + good.stderr)
    assert.ok(bad.ms < QUICK_MS && good.ms < QUICK_MS)
  })

  test('validate: patternProperties on a hostile property name', async () => {
    const data = write('names.json', {name: fine, [`${'b'.repeat(40)}!`]: 'not checked', bbb: 'not an integer'})
    const result = await timed(['validate', '--registry', file('registry.json'), '--urn', URN, data])
    assert.equal(result.code, 1, result.stdout + result.stderr)
    assert.match(result.stdout, /\$\.bbb\s+must be integer/)
    assert.doesNotMatch(result.stdout, /b{40}!/)
  })

  test('publish --registry --dry-run refuses the hostile value and prints the fine one', async () => {
    const bad = await timed(['publish', URN, '--data-file', file('bad.json'), '--registry', file('registry.json'), '--dry-run'])
    assert.equal(bad.code, 1, bad.stderr)
    assert.match(bad.stderr, /must match pattern/)
    const good = await timed(['publish', URN, '--data-file', file('good.json'), '--registry', file('registry.json'), '--dry-run'])
    assert.equal(good.code, 0, good.stderr)
    assert.equal(JSON.parse(good.stdout).data.name, fine)
  })

  test('schema compat --sample: the hostile envelope is a proven break', async () => {
    const sample = write('sample.jsonl', `${JSON.stringify({job: URN, data: {name: evil}, meta: {id: 'm1'}})}\n`)
    const result = await timed(['schema', 'compat', file('open.json'), file('evil.json'), '--sample', sample, '--json'])
    assert.equal(result.code, 1, result.stdout + result.stderr)
    assert.match(result.stdout, /must match pattern/)
  })

  test('a lookaround is refused in one line (exit 2) by validate and publish; schema check reports it', async () => {
    for (const args of [['validate', '--registry', file('look-registry.json'), '--urn', URN, file('good.json')], ['publish', URN, '--data-file', file('good.json'), '--registry', file('look-registry.json'), '--dry-run']]) {
      const result = await timed(args)
      assert.equal(result.code, 2, result.stderr)
      assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
      assert.ok(!hasStackTrace(result.stderr), result.stderr)
      assert.match(result.stderr, /look\.json.*pattern "\^\(\?!x\)a\+\$" uses a lookaround/)
    }
    const check = await timed(['schema', 'check', '-r', file('look-registry.json')])
    assert.equal(check.code, 1, check.stdout + check.stderr)
    assert.match(check.stdout, /uses a lookaround/)
  })

  test('SIGINT ends a running publish --registry (exit 130)', async () => {
    const {child, done} = startBq(['publish', URN, '--data-file', file('good.json'), '--registry', file('registry.json'), '-b', `sqlite://${file('x.db')}`, '--count', '5000000'], {timeoutMs: 60_000})
    // Interrupt once it has published something: the schema was loaded and the data checked.
    await new Promise<void>((resolve) => {
      child.stdout.once('data', () => resolve())
    })
    const signalled = Date.now()
    child.kill('SIGINT')
    const result = await done
    assert.equal(result.code, 130, result.stderr)
    assert.match(result.stderr, /interrupted \(SIGINT\)/)
    assert.ok(Date.now() - signalled < 20_000)
  })
})
