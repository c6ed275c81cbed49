/**
 * `bq schema check` proves a schema compiles without generating its code (compiles.ts); ajv's
 * compile is the reference. On hand-picked cases and on seeded random schemas (some with
 * keyword values of the wrong kind, bad or backtracking patterns, nested $ids, $async), both
 * give the same verdict.
 */
import {describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {readFileSync, readdirSync} from 'node:fs'
import path from 'node:path'

import {proveCompiles} from '../../src/lib/schema/compiles.js'
import {seeded} from '../../src/lib/schema/compat-witness.js'
import {compile, newAjv} from '../../src/lib/schema/registry.js'
import {refProblems} from '../../src/lib/schema/refs.js'
import {registryExamplesDir} from '../support/conformance.js'

const verdict = (run: () => void): string | undefined => {
  try {
    run()
    return undefined
  } catch (error) {
    return (error as Error).message
  }
}
// The reference compiles a schema with a $id in an instance of its own ($ids must not meet).
const referenceAjv = newAjv({addUsedSchema: false})
const reference = (schema: unknown) => verdict(() => compile(JSON.stringify(schema).includes('"$id"') ? newAjv({addUsedSchema: false}) : referenceAjv, schema, 's.json'))
const shared = newAjv({addUsedSchema: false})
const proof = (schema: unknown) =>
  verdict(() => {
    if (!proveCompiles(schema, 's.json', shared)) compile(shared, schema, 's.json')
  })

/**
 * The same verdict, with one allowed difference: the proof refuses a bad pattern wherever it
 * stands, also where ajv never compiles it (an `else` without `if`, patternProperties whose
 * schemas are all `{}`, an unknown keyword's content). Never does it accept what compile refuses.
 */
const same = (schema: unknown) => {
  const [expected, actual] = [reference(schema), proof(schema)]
  const stricter = expected === undefined && actual !== undefined && /pattern|regular expression/.test(actual)
  if (!stricter) assert.equal(actual === undefined, expected === undefined, `${JSON.stringify(schema)}: compile says ${expected ?? 'ok'}, the proof ${actual ?? 'ok'}`)
  return actual
}

describe('proving a schema compiles without compiling it', () => {
  test('hand-picked cases', () => {
    const cases: unknown[] = [
      {type: 'string'}, {type: 'strin'}, {type: ['string', 'string']}, {minLength: -1}, {minLength: 1.5}, {required: 'a'}, {required: ['a', 'a']},
      {pattern: '^a+$'}, {pattern: '['}, {pattern: '^\\-$'}, {pattern: '(?=a)'}, {pattern: '(a)\\1'}, {patternProperties: {'(': {}}}, {patternProperties: {'(?!x)': {}}},
      {properties: {a: {pattern: 3}}}, {enum: []}, {enum: [1, 1]}, {items: [{}, {type: 'x'}]}, {format: 'email'}, {format: 'no-such-format'},
      {$ref: '#/definitions/a', definitions: {a: {type: 'integer'}}}, {definitions: {a: {$id: '#a', type: 'string'}}, $ref: '#a'},
      {definitions: {a: {$id: '#1bad'}}}, {properties: {a: {$async: true}}}, {$async: true, type: 'object'}, {if: {type: 'string'}, then: {minLength: 'x'}},
      {$schema: 'http://json-schema.org/draft-07/schema#', type: 'object'}, {dependencies: {a: ['b'], b: {required: ['c']}}}, {dependencies: {a: 3}},
      {propertyNames: {pattern: '^[a-z]+$'}}, {contains: {const: 1}}, {multipleOf: 0}, {multipleOf: 0.1}, {'x-meta': {anything: true}}, true, false,
    ]
    for (const schema of cases) same(schema)
    assert.match(proof({pattern: '(?=a)'})!, /lookaround/)
    assert.match(proof({else: {pattern: '(?=a)'}})!, /lookaround/)
    assert.match(proof({pattern: '['})!, /not a valid JSON Schema: Invalid regular expression/)
  })

  test('the registry examples', () => {
    const dir = path.join(registryExamplesDir, 'schemas')
    for (const name of readdirSync(dir)) assert.equal(same(JSON.parse(readFileSync(path.join(dir, name), 'utf8'))), undefined)
  })

  test('the same verdict on 1,200 seeded random schemas', () => {
    const random = seeded(20261206)
    const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)]
    const odd = () => pick<unknown>([-1, 1.5, 'x', null, [], {}, true, [1, 1]])
    const types = ['string', 'integer', 'number', 'object', 'array', 'boolean', 'null', 'strng']
    const gen: Record<string, (depth: number) => unknown> = {
      type: () => (random() < 0.7 ? pick(types) : [pick(types), pick(types)]), enum: () => (random() < 0.8 ? ['a', 1] : pick([[], ['a', 'a'], 'a'])), const: () => pick(['a', 1, null]),
      minLength: () => pick([0, 2]), maxItems: () => pick([1, 3]), minimum: () => pick([0, 2.5]), multipleOf: () => pick([1, 0.5, 0]), required: () => pick([['a'], ['a', 'a'], 'a']),
      pattern: () => pick(['^a', '^(a+)+$', '[', '(?=a)', '(a)\\1', '\\p{L}', '^\\-', 'x{2,1}']), format: () => pick(['email', 'uri', 'int32', 'nope']),
      items: (d) => (random() < 0.2 ? [schema(d), schema(d)] : schema(d)), properties: (d) => ({a: schema(d), ...(random() < 0.5 ? {b: schema(d)} : {})}),
      additionalProperties: (d) => schema(d), patternProperties: (d) => ({[pick(['^x', '(', '(?<=a)b', '^a.*'])]: schema(d)}), propertyNames: (d) => schema(d),
      dependencies: (d) => ({a: random() < 0.5 ? ['b'] : schema(d)}), allOf: (d) => [schema(d)], anyOf: (d) => [schema(d), schema(d)], oneOf: (d) => [schema(d)], not: (d) => schema(d),
      if: (d) => schema(d), then: (d) => schema(d), else: (d) => schema(d), $ref: () => pick(['#/definitions/p', '#/definitions/q']), $id: () => pick(['#anchor', 'http://example.com/x.json', '#1x']),
      $async: () => true, 'x-note': (d) => schema(d),
    }
    const keywords = Object.keys(gen)
    function schema(depth: number): unknown {
      if (depth <= 0 || random() < 0.15) return pick([true, false, {}, {type: pick(types)}])
      const node: Record<string, unknown> = {}
      for (let i = 0, n = 1 + Math.floor(random() * 3); i < n; i++) {
        const keyword = pick(keywords)
        node[keyword] = random() < 0.05 ? odd() : gen[keyword](depth - 1)
      }
      return node
    }
    let refused = 0
    const warn = console.warn
    console.warn = () => {}
    let checked = 0
    for (let i = 0; i < 1200; i++) {
      const root = {...(schema(3) as object), definitions: {p: {type: 'string'}, q: {minimum: 1}}}
      // check runs the proof only on schemas whose $refs resolve (refs.ts reports the others).
      if (refProblems(root).length > 0) continue
      checked++
      if (same(root) !== undefined) refused++
    }
    console.warn = warn
    assert.ok(checked > 800 && refused > 100 && checked - refused > 300, `${checked} checked, ${refused} refused`)
  })
})
