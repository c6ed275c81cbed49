/**
 * The build puts draft-07's meta-schema check in dist/ as ajv standalone code
 * (precompiled-meta-schema.ts, meta-schema-code.ts), so that `bq schema check` does not load ajv.
 * That code must give the verdicts and errors of the ajv bq configures: compared here on
 * hand-picked schemas, the registry examples, the bench's schema and seeded random ones.
 */
import {describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {readFileSync, readdirSync} from 'node:fs'
import {createRequire} from 'node:module'
import path from 'node:path'

import {seeded} from '../../src/lib/schema/compat-witness.js'
import {metaSchemaValidatorCode} from '../../src/lib/schema/meta-schema-code.js'
import type {MetaSchemaValidator} from '../../src/lib/schema/precompiled-meta-schema.js'
import {newAjv} from '../../src/lib/schema/registry.js'
import {metaSchemaProblem} from '../../src/lib/schema/schema-document.js'
import {registryExamplesDir} from '../support/conformance.js'
// @ts-expect-error: a plain JavaScript module of the bench, without types
import {sampleSchema} from '../../bench/schema/sample-schema.js'

/** The generated CommonJS, loaded as the bundle loads it (its requires from node_modules). */
function loadGenerated(): MetaSchemaValidator {
  const module = {exports: {} as unknown}
  const require = createRequire(import.meta.url)
  new Function('module', 'exports', 'require', metaSchemaValidatorCode())(module, module.exports, require)
  return module.exports as MetaSchemaValidator
}

const precompiled = loadGenerated()
const ajv = newAjv()

const errorsOf = (errors: MetaSchemaValidator['errors']) => (errors ?? []).map((e) => `${e.instancePath} ${e.message}`)
function same(schema: unknown): boolean {
  const expected = ajv.validateSchema(schema as object) as boolean
  const actual = precompiled(schema)
  assert.equal(actual, expected, `${JSON.stringify(schema)}: ajv says ${expected}, the precompiled code ${actual}`)
  // (ajv's validateSchema answers true for a boolean schema without clearing its last errors.)
  if (!actual) assert.deepEqual(errorsOf(precompiled.errors), errorsOf(ajv.errors), JSON.stringify(schema))
  return actual
}

describe('the precompiled draft-07 meta-schema check', () => {
  test('hand-picked schemas', () => {
    const cases: unknown[] = [
      {}, {type: 'string'}, {type: 'strin'}, {type: ['string', 'string']}, {minLength: -1}, {minLength: 1.5}, {required: 'a'}, {required: ['a', 'a']},
      {enum: []}, {enum: [1, 1]}, {enum: 'a'}, {items: [{}, {type: 'x'}]}, {properties: {a: {type: 3}}}, {additionalProperties: 'no'}, {$id: 3},
      {$schema: 'http://json-schema.org/draft-07/schema#', type: 'object'}, {dependencies: {a: 3}}, {multipleOf: 0}, {allOf: []}, {anyOf: [{type: 'x'}, {}]},
      {if: {type: 'string'}, then: {minLength: 'x'}}, {definitions: {a: {maxItems: -2}}}, {patternProperties: {'^a': {type: 'nope'}}}, {$ref: 3},
    ]
    assert.deepEqual(cases.filter((schema) => same(schema)), [{}, {type: 'string'}, {$schema: 'http://json-schema.org/draft-07/schema#', type: 'object'}])
  })

  test('the registry examples and the bench schema', () => {
    const dir = path.join(registryExamplesDir, 'schemas')
    for (const name of readdirSync(dir)) assert.equal(same(JSON.parse(readFileSync(path.join(dir, name), 'utf8'))), true)
    for (const variant of [0, 1, 2]) assert.equal(same(sampleSchema(7, variant)), true)
  })

  test('the same verdicts and errors on 2,000 seeded random schemas', () => {
    const random = seeded(20261207)
    const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)]
    const odd = () => pick<unknown>([-1, 1.5, 'x', null, [], {}, true, [1, 1], 0])
    const keywords = ['type', 'enum', 'const', 'minLength', 'maxItems', 'minimum', 'multipleOf', 'required', 'pattern', 'format', 'items', 'properties', 'additionalProperties',
      'patternProperties', 'propertyNames', 'dependencies', 'allOf', 'anyOf', 'oneOf', 'not', 'if', 'then', 'else', '$ref', '$id', 'definitions', 'uniqueItems', 'contains', 'x-note']
    const good: Record<string, (depth: number) => unknown> = {
      type: () => pick(['string', 'integer', ['null', 'number'], 'strng']), enum: () => pick([['a', 1], [], ['a', 'a']]), const: () => pick(['a', {b: 1}]), required: () => pick([['a'], ['a', 'a']]),
      items: (d) => (random() < 0.3 ? [schema(d)] : schema(d)), properties: (d) => ({a: schema(d)}), patternProperties: (d) => ({'^x': schema(d)}), dependencies: (d) => ({a: random() < 0.5 ? ['b'] : schema(d)}),
      allOf: (d) => [schema(d)], anyOf: (d) => [schema(d), schema(d)], oneOf: () => [], definitions: (d) => ({p: schema(d)}), $ref: () => pick(['#/definitions/p', '#']), $id: () => pick(['#a', 'http://x.y/z']),
    }
    function schema(depth: number): unknown {
      if (depth <= 0 || random() < 0.15) return pick([true, false, {}, {type: 'string'}])
      const node: Record<string, unknown> = {}
      for (let i = 0, n = 1 + Math.floor(random() * 3); i < n; i++) {
        const keyword = pick(keywords)
        node[keyword] = random() < 0.25 || good[keyword] === undefined ? (random() < 0.5 ? odd() : pick([0, 2, 'date', true, '^a'])) : good[keyword](depth - 1)
      }
      return node
    }
    let valid = 0
    for (let i = 0; i < 2000; i++) if (same(schema(3))) valid++
    assert.ok(valid > 200 && valid < 1800, `${valid} of 2,000 valid`)
  })

  test('long enums are cut before the check, short ones are checked whole: the same problems', () => {
    const long = Array.from({length: 40}, (_, i) => `v${i}`)
    assert.equal(metaSchemaProblem({enum: long}, ajv), undefined)
    assert.equal(metaSchemaProblem({properties: {a: {enum: [...long, 'v3']}}}, ajv), '/properties/a/enum enum values must be unique')
    assert.equal(metaSchemaProblem({enum: [{a: 1, b: 2}, {b: 2, a: 1}]}, ajv), '/enum enum values must be unique')
    assert.equal(metaSchemaProblem({enum: long, type: 'nope'}, ajv), '/type must be equal to one of the allowed values')
    assert.equal(metaSchemaProblem({not: {enum: long}, minimum: 'x'}, ajv), '/minimum must be number')
  })
})
