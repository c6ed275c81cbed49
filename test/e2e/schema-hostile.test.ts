/**
 * `bq schema` on hostile or unsupported input, end to end through bin/run.js: each refusal is
 * one line and the documented exit code, never a stack trace or "unexpected error".
 */
import {after, before, describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {cpSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {registryExamplesDir} from '../support/conformance.js'
import {hasStackTrace, runBq} from '../support/cli.js'

let dir: string
before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-schema-hostile-'))
})
after(() => rmSync(dir, {recursive: true, force: true}))

const write = (name: string, value: unknown): string => {
  const file = path.join(dir, name)
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value))
  return file
}

const oneLine = (stderr: string) => {
  assert.equal(stderr.trim().split('\n').length, 1, stderr)
  assert.ok(!hasStackTrace(stderr), stderr)
  assert.doesNotMatch(stderr, /unexpected error/)
}

describe('bq schema compat on unsupported or hostile schemas', () => {
  for (const draft of ['draft-04', 'draft-06']) {
    test(`a ${draft} schema is refused naming the draft (exit 2), even against itself`, async () => {
      const file = write(`${draft}.json`, {$schema: `http://json-schema.org/${draft}/schema#`, type: 'string'})
      const result = await runBq(['schema', 'compat', file, file])
      assert.equal(result.code, 2, result.stderr)
      assert.match(result.stderr, new RegExp(draft))
      oneLine(result.stderr)
    })
  }

  test('a plain-name fragment $ref ("#addr" with $id) is followed', async () => {
    const schema = {$id: 'http://example.com/s.json', definitions: {a: {$id: '#addr', type: 'string'}}, properties: {x: {$ref: '#addr'}}}
    const file = write('plain-name.json', schema)
    assert.equal((await runBq(['schema', 'compat', file, file])).code, 0)
  })

  test('a schema nested 1,000 levels deep is refused in one line (exit 2)', async () => {
    const file = write('deep.json', `${'{"not":'.repeat(1000)}{}${'}'.repeat(1000)}`)
    const result = await runBq(['schema', 'compat', file, file])
    assert.equal(result.code, 2, result.stderr)
    assert.match(result.stderr, /nested more than/)
    oneLine(result.stderr)
  })

  test('a breaking verdict carries its witness (--json)', async () => {
    const old = write('int.json', {type: 'integer'})
    const next = write('int32.json', {type: 'integer', format: 'int32'})
    const result = await runBq(['schema', 'compat', old, next, '--json'])
    assert.equal(result.code, 1, result.stderr)
    const json = JSON.parse(result.stdout)
    assert.equal(json.result?.verdict ?? json.verdict, 'breaking')
    assert.equal(typeof (json.result ?? json).witness?.value, 'number')
  })

  test('"cannot prove" with a witness found is breaking: oneOf with a branch repeated', async () => {
    const old = write('oneof.json', {oneOf: [{type: 'string'}, {type: 'integer'}]})
    const next = write('oneof-dup.json', {oneOf: [{type: 'string'}, {type: 'integer'}, {type: 'string'}]})
    const result = await runBq(['schema', 'compat', old, next])
    assert.equal(result.code, 1, result.stdout + result.stderr)
    assert.match(result.stdout, /witness/)
  })
})

describe('bq schema gdpr --mask fails closed', () => {
  const registry = path.join(registryExamplesDir, 'registry.json')
  test('bare data is refused (exit 1), printed with --allow-unmasked', async () => {
    const file = write('bare.json', {email: 'a@b.co'})
    const refused = await runBq(['schema', 'gdpr', '-r', registry, '--mask', file])
    assert.equal(refused.code, 1, refused.stderr)
    assert.equal(refused.stdout, '')
    oneLine(refused.stderr)
    const allowed = await runBq(['schema', 'gdpr', '-r', registry, '--mask', file, '--allow-unmasked'])
    assert.equal(allowed.code, 0, allowed.stderr)
    assert.match(allowed.stdout, /a@b\.co/)
  })

  test('an envelope whose URN has no schema is refused (exit 1)', async () => {
    const file = write('unknown-urn.json', {job: 'urn:babel:nobody:knows', trace_id: 't', data: {email: 'a@b.co'}, meta: {id: '1', schema_version: 1}})
    const refused = await runBq(['schema', 'gdpr', '-r', registry, '--mask', file])
    assert.equal(refused.code, 1, refused.stderr)
    assert.doesNotMatch(refused.stdout, /a@b\.co/)
  })
})

describe('bq schema export-asyncapi refuses what it cannot write soundly', () => {
  const copy = (name: string) => {
    const target = path.join(dir, name)
    cpSync(registryExamplesDir, target, {recursive: true})
    return target
  }

  test('-o naming its own registry.json is refused, the file left alone', async () => {
    const folder = copy('overwrite')
    const result = await runBq(['schema', 'export-asyncapi', '-r', path.join(folder, 'registry.json'), '-o', path.join(folder, 'registry.json')])
    assert.equal(result.code, 2, result.stderr)
    assert.match(result.stderr, /is an input/)
    oneLine(result.stderr)
  })

  test('a schema symlinked from outside the registry folder is refused', async () => {
    const folder = copy('symlink')
    const outside = write('secret.json', {type: 'object', description: 'outside'})
    symlinkSync(outside, path.join(folder, 'schemas', 'linked.json'))
    writeFileSync(path.join(folder, 'registry.json'), JSON.stringify({schemas: [{urn: 'urn:babel:x:linked', schema: 'schemas/linked.json'}]}))
    const result = await runBq(['schema', 'export-asyncapi', '-r', path.join(folder, 'registry.json')])
    assert.equal(result.code, 2, result.stderr)
    assert.match(result.stderr, /outside the registry's folder/)
    assert.doesNotMatch(result.stdout, /outside/)
  })

  for (const [name, schema] of [['true', true], ['a list', [1]], ['a type typo', {type: 'strng'}], ['a bad regex', {type: 'string', pattern: '('}], ['minLength -1', {type: 'string', minLength: -1}]] as const) {
    test(`a schema that is ${name} is refused (no document written)`, async () => {
      const folder = copy(`invalid-${name.replace(/\W+/g, '-')}`)
      writeFileSync(path.join(folder, 'registry.json'), JSON.stringify({schemas: [{urn: 'urn:babel:x:bad', schema}]}))
      const out = path.join(folder, 'asyncapi.json')
      const result = await runBq(['schema', 'export-asyncapi', '-r', path.join(folder, 'registry.json'), '-o', out])
      assert.notEqual(result.code, 0, result.stderr)
      assert.match(result.stderr, /urn:babel:x:bad/)
      oneLine(result.stderr)
      const check = await runBq(['schema', 'check', '-r', path.join(folder, 'registry.json')])
      assert.equal(check.code, 1, check.stdout + check.stderr)
    })
  }
})

describe('bq schema check on a hostile schema', () => {
  test('a schema nested 50,000 levels deep is one broken entry, not a crash (exit 1)', async () => {
    const folder = path.join(dir, 'deep-registry')
    const depth = 50_000
    mkdirSync(folder)
    writeFileSync(path.join(folder, 'deep.json'), `${'{"items":'.repeat(depth)}{}${'}'.repeat(depth)}`)
    writeFileSync(path.join(folder, 'registry.json'), JSON.stringify({schemas: [{urn: 'urn:babel:hostile:deep', schema: 'deep.json'}]}))
    const result = await runBq(['schema', 'check', '-r', path.join(folder, 'registry.json')])
    assert.equal(result.code, 1, result.stdout + result.stderr)
    assert.match(result.stdout, /nested more than 200 levels.*\[schema\.invalid\]/)
    assert.ok(!hasStackTrace(result.stdout + result.stderr))
    assert.doesNotMatch(result.stderr, /unexpected error/)
  })
})
