/**
 * `bq schema check` remembers the schema texts it proved sound (src/lib/schema/check-cache.ts):
 * a second run over the same registry gives the same report without proving them again, and
 * nothing it remembers can hide a problem: a changed schema is proven afresh, a repeated `$id`
 * is still found, an unreadable cache is no cache, and BQ_SCHEMA_CHECK_CACHE=off writes none.
 */
import {after, before, describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {jsonResult, runBq} from '../support/cli.js'

let dir: string
let cacheHome: string
const registry = () => path.join(dir, 'registry.json')
const cacheFiles = () => {
  try {
    return readdirSync(path.join(cacheHome, 'bq', 'schema-check'))
  } catch {
    return []
  }
}
const remembered = () => cacheFiles().reduce((n, f) => n + Object.keys(JSON.parse(readFileSync(path.join(cacheHome, 'bq', 'schema-check', f), 'utf8')).sound).length, 0)
const check = (env: NodeJS.ProcessEnv = {}) => runBq(['schema', 'check', '--registry', registry(), '--json'], {env: {XDG_CACHE_HOME: cacheHome, ...env}})
const writeSchema = (name: string, schema: unknown) => writeFileSync(path.join(dir, 'schemas', `${name}.json`), JSON.stringify(schema, null, 2))
const rulesOf = (data: {entries: Array<{urn: string; issues: Array<{rule: string}>}>}) => data.entries.flatMap((e) => e.issues.map((i) => `${e.urn} ${i.rule}`))

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-check-cache-'))
  cacheHome = path.join(dir, 'cache')
  mkdirSync(path.join(dir, 'schemas'))
  const object = (extra: Record<string, unknown>) => ({type: 'object', properties: {id: {type: 'integer'}, sku: {type: 'string', pattern: '^[A-Z]+$'}}, ...extra})
  writeSchema('a', object({$id: 'urn:schema:a'}))
  writeSchema('b', object({required: ['id']}))
  writeSchema('c', object({$id: 'urn:schema:c'}))
  // Sound, but judged by ajv (a nested $id is compiled; this $schema spelling is ajv's to resolve): not remembered.
  writeSchema('d', object({definitions: {x: {$id: '#x', type: 'string'}}}))
  writeSchema('e', object({$schema: 'http://json-schema.org/draft-07/schema#/'}))
  writeFileSync(registry(), JSON.stringify({schemas: ['a', 'b', 'c', 'd', 'e'].map((n) => ({urn: `urn:babel:cache:${n}`, schema: `schemas/${n}.json`}))}))
})
after(() => rmSync(dir, {recursive: true, force: true}))

describe('bq schema check remembers what it proved', () => {
  test('a second run over the same registry: the same verdict, from the cache', async () => {
    const first = await check()
    assert.equal(first.code, 0, first.stdout + first.stderr)
    assert.equal(remembered(), 3, 'a, b and c; not d (compiled by ajv) nor e (its $schema left to ajv)')
    const second = await check()
    assert.equal(second.code, 0, second.stderr)
    assert.deepEqual(jsonResult(second.stdout), jsonResult(first.stdout))
  })

  test('a schema changed after it was remembered is proven afresh', async () => {
    writeSchema('b', {type: 'object', properties: {sku: {type: 'string', pattern: '(?=a)'}}})
    const result = await check()
    assert.equal(result.code, 1)
    assert.deepEqual(rulesOf(jsonResult(result.stdout) as never), ['urn:babel:cache:b schema.invalid'])
    assert.equal(remembered(), 2, 'the broken schema is not remembered')
  })

  test('two remembered schemas that come to share an $id: still reported', async () => {
    writeSchema('b', {type: 'object'})
    writeSchema('c', {type: 'object', properties: {id: {type: 'integer'}, sku: {type: 'string', pattern: '^[A-Z]+$'}}, $id: 'urn:schema:a#'})
    const first = await check()
    assert.deepEqual(rulesOf(jsonResult(first.stdout) as never), ['urn:babel:cache:c schema.invalid'])
    const again = await check()
    assert.deepEqual(rulesOf(jsonResult(again.stdout) as never), ['urn:babel:cache:c schema.invalid'])
  })

  test('an unreadable cache is no cache; BQ_SCHEMA_CHECK_CACHE=off writes none', async () => {
    for (const file of cacheFiles()) writeFileSync(path.join(cacheHome, 'bq', 'schema-check', file), '{not json')
    const garbled = await check()
    assert.deepEqual(rulesOf(jsonResult(garbled.stdout) as never), ['urn:babel:cache:c schema.invalid'])
    rmSync(cacheHome, {recursive: true, force: true})
    const off = await check({BQ_SCHEMA_CHECK_CACHE: 'off'})
    assert.deepEqual(rulesOf(jsonResult(off.stdout) as never), ['urn:babel:cache:c schema.invalid'])
    assert.deepEqual(cacheFiles(), [])
  })
})
