/**
 * `bq schema compat` rule by rule: each rule on a small schema, once where it breaks and once
 * where the same kind of change is compatible. The direction is always "every instance valid
 * under OLD is still valid under NEW".
 */
import assert from 'node:assert/strict'
import {describe, test} from 'node:test'

import {compareSchemas} from '../../src/lib/schema/compat.js'
import {findWitness, seeded, validatorOf} from '../../src/lib/schema/compat-witness.js'
import {newAjv} from '../../src/lib/schema/registry.js'
import {nextUrn} from '../../src/lib/schema/compat-registry.js'
import {BqError} from '../../src/lib/errors.js'

type Case = [name: string, old: unknown, next: unknown, expected: string | null, severity?: 'breaking' | 'unproven' | 'warning']

const S = {type: 'string'}
const N = {type: 'number'}
const I = {type: 'integer'}
const A = (extra: object = {}) => ({type: 'array', ...extra})
const O = (extra: object = {}) => ({type: 'object', ...extra})
const closed = (properties: object, extra: object = {}) => ({type: 'object', properties, additionalProperties: false, ...extra})

/** [rule, OLD, NEW, the rule expected (null: compatible), its severity (default breaking)]. */
const cases: Case[] = [
  // type
  ['type narrowed: number → integer', N, I, 'type.narrowed'],
  ['type widened: integer → number', I, N, null],
  ['type union narrowed', {type: ['string', 'null']}, S, 'type.narrowed'],
  ['type union widened', S, {type: ['string', 'null']}, null],
  ['type added where there was none', {}, S, 'type.added'],
  // enum / const
  ['enum narrowed', {enum: ['a', 'b']}, {enum: ['a']}, 'enum.narrowed'],
  ['enum widened', {enum: ['a']}, {enum: ['a', 'b']}, null],
  ['enum added to a string', S, {type: 'string', enum: ['a']}, 'enum.added'],
  ['enum value OLD never accepted dropped', {type: 'string', enum: ['a', 1]}, {type: 'string', enum: ['a']}, null],
  ['const added', S, {type: 'string', const: 'x'}, 'const.added'],
  ['const changed', {const: 'x'}, {const: 'y'}, 'const.changed'],
  ['const turned into an enum holding it', {const: 'x'}, {enum: ['x', 'y']}, null],
  ['boolean narrowed to one value', {type: 'boolean'}, {const: true}, 'const.added'],
  // strings
  ['minLength raised', {type: 'string', minLength: 1}, {type: 'string', minLength: 3}, 'minLength.raised'],
  ['minLength lowered', {type: 'string', minLength: 3}, {type: 'string', minLength: 1}, null],
  ['maxLength lowered', {type: 'string', maxLength: 10}, {type: 'string', maxLength: 5}, 'maxLength.lowered'],
  ['maxLength added', S, {type: 'string', maxLength: 5}, 'maxLength.added'],
  ['maxLength raised', {type: 'string', maxLength: 5}, {type: 'string', maxLength: 10}, null],
  ['pattern added', S, {type: 'string', pattern: '^a'}, 'pattern.added'],
  ['pattern removed', {type: 'string', pattern: '^a'}, S, null],
  ['pattern changed', {type: 'string', pattern: '^a'}, {type: 'string', pattern: '^b'}, 'pattern.changed', 'unproven'],
  ['format added', S, {type: 'string', format: 'email'}, 'format.added'],
  ['format removed', {type: 'string', format: 'email'}, S, null],
  ['format changed', {type: 'string', format: 'email'}, {type: 'string', format: 'uri'}, 'format.changed', 'unproven'],
  ['unknown format added (an annotation for ajv)', S, {type: 'string', format: 'made-up'}, null],
  ['string rule on a number-only schema', N, {type: 'number', maxLength: 1}, null],
  // numbers
  ['minimum raised', {type: 'number', minimum: 0}, {type: 'number', minimum: 1}, 'minimum.raised'],
  ['minimum lowered', {type: 'number', minimum: 1}, {type: 'number', minimum: 0}, null],
  ['maximum lowered', {type: 'number', maximum: 10}, {type: 'number', maximum: 9}, 'maximum.lowered'],
  ['maximum added', N, {type: 'number', maximum: 9}, 'maximum.added'],
  ['maximum raised', {type: 'number', maximum: 9}, {type: 'number', maximum: 10}, null],
  ['exclusiveMinimum tightened (minimum 1 → exclusiveMinimum 1)', {type: 'number', minimum: 1}, {type: 'number', exclusiveMinimum: 1}, 'exclusiveMinimum.raised'],
  ['exclusiveMinimum 0 over the integers is minimum 1', {type: 'integer', minimum: 1}, {type: 'integer', exclusiveMinimum: 0}, null],
  ['exclusiveMaximum tightened', {type: 'number', exclusiveMaximum: 10}, {type: 'number', exclusiveMaximum: 5}, 'exclusiveMaximum.lowered'],
  ['exclusiveMaximum loosened', {type: 'number', exclusiveMaximum: 5}, {type: 'number', exclusiveMaximum: 10}, null],
  ['multipleOf added', N, {type: 'number', multipleOf: 0.5}, 'multipleOf.added'],
  ['multipleOf changed to a non-divisor', {type: 'integer', multipleOf: 4}, {type: 'integer', multipleOf: 3}, 'multipleOf.changed'],
  ['multipleOf changed to a divisor (ajv rejects 2e21 / 2)', {type: 'integer', multipleOf: 4}, {type: 'integer', multipleOf: 2}, 'multipleOf.changed', 'unproven'],
  ['multipleOf 1 on integers (ajv rejects 1e21)', I, {type: 'integer', multipleOf: 1}, 'multipleOf.added', 'unproven'],
  ['multipleOf 1 on integers below 1e21', {type: 'integer', maximum: 1000}, {type: 'integer', maximum: 1000, multipleOf: 1}, 'multipleOf.added', 'unproven'],
  // arrays
  ['minItems raised', A({minItems: 1}), A({minItems: 2}), 'minItems.raised'],
  ['minItems lowered', A({minItems: 2}), A({minItems: 1}), null],
  ['maxItems lowered', A({maxItems: 5}), A({maxItems: 3}), 'maxItems.lowered'],
  ['maxItems raised', A({maxItems: 3}), A({maxItems: 5}), null],
  ['uniqueItems added', A(), A({uniqueItems: true}), 'uniqueItems.added'],
  ['uniqueItems dropped', A({uniqueItems: true}), A(), null],
  ['items retyped', A({items: S}), A({items: N}), 'type.narrowed'],
  ['items widened', A({items: I}), A({items: N}), null],
  ['tuple: additionalItems closed', A({items: [S]}), A({items: [S], additionalItems: false}), 'additionalItems.closed'],
  ['tuple: a position loosened', A({items: [I]}), A({items: [N]}), null],
  ['contains added', A(), A({contains: S}), 'contains.added'],
  ['contains loosened', A({contains: I}), A({contains: N}), null],
  ['contains changed', A({contains: N}), A({contains: I}), 'contains.changed', 'unproven'],
  // objects
  ['required added', O({properties: {a: S}}), O({properties: {a: S}, required: ['a']}), 'required.added'],
  ['required dropped', O({required: ['a']}), O(), null],
  ['property removed from a closed object', closed({a: S}), closed({}), 'property.removed'],
  ['property removed from an open object', O({properties: {a: S}}), O(), null],
  ['property retyped', O({properties: {a: S}}), O({properties: {a: I}}), 'type.narrowed'],
  ['optional property added to a closed object', closed({a: S}), closed({a: S, b: S}), null],
  ['optional property added to an object whose additionalProperties is {}', O({additionalProperties: {}}), O({additionalProperties: {}, properties: {b: S}}), 'property.added-open', 'warning'],
  ['optional property added to an open object', O({properties: {a: S}}), O({properties: {a: S, b: S}}), 'property.added-open', 'warning'],
  ['annotations only', O({properties: {a: S}}), O({properties: {a: {type: 'string', description: 'd', title: 't', 'x-gdpr-sensitive': 'email', examples: ['x'], default: 'y'}}}), null],
  ['additionalProperties closed', O(), O({additionalProperties: false}), 'additionalProperties.closed'],
  ['additionalProperties opened', O({additionalProperties: false}), O(), null],
  ['additionalProperties narrowed to a schema', O(), O({additionalProperties: S}), 'type.added'],
  ['minProperties raised', O({minProperties: 1}), O({minProperties: 2}), 'minProperties.raised'],
  ['minProperties lowered', O({minProperties: 2}), O({minProperties: 1}), null],
  ['maxProperties lowered', O({maxProperties: 3}), O({maxProperties: 2}), 'maxProperties.lowered'],
  ['maxProperties added', O(), O({maxProperties: 2}), 'maxProperties.added'],
  ['propertyNames pattern added', O(), O({propertyNames: {pattern: '^[a-z]+$'}}), 'pattern.added'],
  ['propertyNames {type: string} (every name is one)', O(), O({propertyNames: S}), null],
  ['patternProperties added over an open object', O(), O({patternProperties: {'^n_': N}}), 'type.added'],
  ['patternProperties widened', O({patternProperties: {'^n_': I}}), O({patternProperties: {'^n_': N}}), null],
  ['dependencies added', O(), O({dependencies: {a: ['b']}}), 'dependencies.added'],
  ['dependencies dropped', O({dependencies: {a: ['b']}}), O(), null],
  // nested: items → properties
  ['nested property retyped inside items', A({items: O({properties: {sku: S}})}), A({items: O({properties: {sku: I}})}), 'type.narrowed'],
  // $ref
  ['$ref target tightened', {definitions: {d: S}, properties: {a: {$ref: '#/definitions/d'}}}, {definitions: {d: {type: 'string', minLength: 2}}, properties: {a: {$ref: '#/definitions/d'}}}, 'minLength.added'],
  ['inlined into a definition unchanged', {properties: {a: {type: 'string', minLength: 2}}}, {definitions: {d: {type: 'string', minLength: 2}}, properties: {a: {$ref: '#/definitions/d'}}}, null],
  ['$ref repointed to a wider definition', {definitions: {i: I, n: N}, properties: {a: {$ref: '#/definitions/i'}}}, {definitions: {i: I, n: N}, properties: {a: {$ref: '#/definitions/n'}}}, null],
  // allOf
  ['allOf added', O(), {type: 'object', allOf: [{required: ['a']}]}, 'required.added'],
  ['allOf flattened into one schema', {type: 'object', allOf: [{required: ['a']}]}, {type: 'object', required: ['a']}, null],
  // anyOf / oneOf
  ['anyOf branch removed', {anyOf: [S, I]}, {anyOf: [S]}, 'anyOf.branch-removed'],
  ['anyOf reordered', {anyOf: [S, I]}, {anyOf: [I, S]}, null],
  ['anyOf branch narrowed', {anyOf: [S, N]}, {anyOf: [S, I]}, 'anyOf.branch-narrowed'],
  ['anyOf branch widened', {anyOf: [S, I]}, {anyOf: [S, N]}, null],
  ['anyOf added that covers every type', {type: ['string', 'integer']}, {anyOf: [I, S]}, null],
  ['anyOf added that leaves a type out', {type: ['string', 'integer']}, {anyOf: [S]}, 'anyOf.added'],
  ['anyOf replaced by a schema covering every branch', {anyOf: [I, S]}, {type: ['string', 'number']}, null],
  ['anyOf replaced by a narrower schema', {anyOf: [N, S]}, {type: ['string', 'integer']}, 'type.narrowed'],
  ['oneOf branch removed', {oneOf: [S, I]}, {oneOf: [S]}, 'oneOf.branch-removed'],
  ['oneOf branch added', {oneOf: [S, I]}, {oneOf: [S, I, N]}, 'oneOf.branch-added', 'unproven'],
  ['oneOf unchanged but reordered', {oneOf: [S, I]}, {oneOf: [I, S]}, null],
  ['oneOf branch added that overlaps no other', {oneOf: [S, I]}, {oneOf: [S, I, {type: 'boolean'}]}, null],
  ['oneOf branch widened into another branch', {oneOf: [{type: 'integer', minimum: 10}, {type: 'integer', maximum: 5}]}, {oneOf: [{type: 'integer', minimum: 0}, {type: 'integer', maximum: 5}]}, 'oneOf.branch-widened', 'unproven'],
  ['oneOf branch widened without overlap', {oneOf: [S, I]}, {oneOf: [S, N]}, null],
  ['oneOf added over disjoint types', {type: ['string', 'integer']}, {oneOf: [I, S]}, null],
  ['oneOf added over overlapping branches', N, {oneOf: [I, N]}, 'oneOf.added', 'unproven'],
  ['a declared property forbidden', O({properties: {a: S}}), O({properties: {a: false}}), 'property.forbidden'],
  // not
  ['not added', O(), {type: 'object', not: {required: ['a']}}, 'not.added'],
  ['not added that excludes nothing OLD allowed', S, {type: 'string', not: N}, null],
  ['not narrowed (excludes less)', {not: N}, {not: I}, null],
  ['not changed', {not: I}, {not: S}, 'not.changed', 'unproven'],
  // if/then/else
  ['if/then added', O(), {type: 'object', if: {required: ['a']}, then: {required: ['b']}}, 'if.changed', 'unproven'],
  // boolean schemas
  ['false where true was', true, false, 'schema.false'],
  ['true where false was', false, true, null],
]

const defs = (definitions: object, rest: object) => ({definitions, ...rest})

/**
 * Changes compat once called compatible, each with a value OLD accepts and NEW rejects under
 * bq's validator: the verdict must be breaking, and the witness one such value.
 */
const witnessed: Array<[name: string, old: unknown, next: unknown]> = [
  ['pattern "^$" added (rejects "a")', S, {type: 'string', pattern: '^$'}],
  ['pattern "^.*$" added (rejects "a\\nb")', S, {type: 'string', pattern: '^.*$'}],
  ['multipleOf 0.3 → 0.1 (0.3 / 0.1 is not an integer in floating point)', {type: 'number', multipleOf: 0.3}, {type: 'number', multipleOf: 0.1}],
  ['multipleOf 1 added on integers (1e21)', I, {type: 'integer', multipleOf: 1}],
  ['multipleOf 0.5 added on integers (1e21)', I, {type: 'integer', multipleOf: 0.5}],
  ['format int32 added on integers (3000000000)', I, {type: 'integer', format: 'int32'}],
  ['format int64 added on numbers', N, {type: 'number', format: 'int64'}],
  ['oneOf: a $ref\'d branch widened into another branch', defs({a: {type: 'integer', minimum: 10}}, {oneOf: [{$ref: '#/definitions/a'}, {type: 'integer', maximum: 5}]}), defs({a: {type: 'integer', minimum: 0}}, {oneOf: [{$ref: '#/definitions/a'}, {type: 'integer', maximum: 5}]})],
  ['not: the excluded definition widened', defs({d: {type: 'integer', minimum: 10}}, {not: {$ref: '#/definitions/d'}}), defs({d: {type: 'integer', minimum: 0}}, {not: {$ref: '#/definitions/d'}})],
  ['if: the condition widened behind a $ref', defs({c: {properties: {a: {const: 1}}, required: ['a']}}, {type: 'object', if: {$ref: '#/definitions/c'}, then: {required: ['b']}}), defs({c: {required: ['a']}}, {type: 'object', if: {$ref: '#/definitions/c'}, then: {required: ['b']}})],
  ['then: the consequence tightened behind a $ref', defs({t: {}}, {type: 'object', if: {required: ['a']}, then: {$ref: '#/definitions/t'}}), defs({t: {required: ['b']}}, {type: 'object', if: {required: ['a']}, then: {$ref: '#/definitions/t'}})],
  ['oneOf with a branch repeated', {oneOf: [S, I]}, {oneOf: [S, I, S]}],
  ['a closed object split into allOf branches', closed({a: S, b: S}), {allOf: [{type: 'object', properties: {a: S}, additionalProperties: false}, {properties: {b: S}}]}],
  ['a $ref to a closed definition plus sibling properties', closed({a: S, b: S}), defs({c: closed({a: S})}, {$ref: '#/definitions/c', properties: {b: S}})],
  ['properties moved into allOf, additionalProperties false left outside', closed({a: S}), {type: 'object', allOf: [{properties: {a: S}}], additionalProperties: false}],
  ['additionalItems in another allOf branch than items (ignored there) brought beside them', {type: 'array', allOf: [{items: [S]}, {additionalItems: false}]}, A({items: [S], additionalItems: false})],
  ['patternProperties rewritten (^a → ^a.*) and retyped, closed object', O({patternProperties: {'^a': S}, additionalProperties: false}), O({patternProperties: {'^a.*': I}, additionalProperties: false})],
]

describe('schema compat: witnessed breaks', () => {
  const ajv = newAjv()
  for (const [name, old, next] of witnessed) {
    test(name, () => {
      const result = compareSchemas(old, next)
      assert.ok(result.breaking > 0, `expected breaking, got ${JSON.stringify(result.findings)}`)
      assert.ok(result.witness, `expected a witness, got none (${JSON.stringify(result.findings)})`)
      const value = result.witness.value
      assert.ok(ajv.validate(old as object, value), `OLD rejects the witness ${JSON.stringify(value)}`)
      assert.ok(!ajv.validate(next as object, value), `NEW accepts the witness ${JSON.stringify(value)}`)
    })
  }

  // A quadratic comparison of 300,000 values would run for many minutes: the timeout catches that
  // without asserting a speed (a busy machine must not fail it; bench/ measures speed).
  test('an enum of 300,000 values compares in linear time', {timeout: 180_000}, () => {
    const values = Array.from({length: 300_000}, (_, i) => `v${i}`)
    const result = compareSchemas({type: 'string', enum: values}, {type: 'string', enum: [...values, 'extra']})
    assert.equal(result.findings.length, 0)
  })
})

describe('schema compat rules', () => {
  for (const [name, old, next, expected, severity = 'breaking'] of cases) {
    test(`${expected === null ? 'compatible' : `${severity} ${expected}`}: ${name}`, () => {
      const {findings} = compareSchemas(old, next)
      if (expected === null) {
        assert.deepEqual(findings.filter((f) => f.severity !== 'warning'), [], `expected compatible, got ${JSON.stringify(findings)}`)
        return
      }
      const found = findings.find((f) => f.rule === expected)
      assert.ok(found, `expected ${expected}, got ${JSON.stringify(findings.map((f) => `${f.severity} ${f.rule}`))}`)
      assert.equal(found.severity, severity)
    })
  }

  test('a finding names the data path and the schema path', () => {
    const old = closed({customer: closed({email: S})})
    const next = closed({customer: closed({email: {type: 'string', format: 'email'}})})
    const [finding] = compareSchemas(old, next).findings
    assert.equal(finding.path, '$.customer.email')
    assert.equal(finding.schemaPath, '/properties/customer/properties/email/format')
    assert.equal(finding.side, 'new')
  })

  test('identical schemas: nothing to report', () => {
    const schema = {type: 'object', required: ['a'], properties: {a: {type: 'string', pattern: '^x', format: 'email'}, b: {oneOf: [S, I]}}}
    assert.deepEqual(compareSchemas(schema, structuredClone(schema)).findings, [])
  })

  test('a recursive schema compares without looping', () => {
    const tree = (leaf: object) => ({definitions: {node: {type: 'object', properties: {value: leaf, children: {type: 'array', items: {$ref: '#/definitions/node'}}}}}, $ref: '#/definitions/node'})
    assert.deepEqual(compareSchemas(tree(I), tree(N)).findings, [])
    assert.equal(compareSchemas(tree(N), tree(I)).findings[0]?.rule, 'type.narrowed')
  })

  test('a $ref cycle that never reaches a schema is a usage error (exit 2)', () => {
    const cyclic = {definitions: {a: {$ref: '#/definitions/b'}, b: {$ref: '#/definitions/a'}}, properties: {x: {$ref: '#/definitions/a'}}}
    assert.throws(() => compareSchemas(cyclic, {}), (error: unknown) => error instanceof BqError && error.exitCode === 2 && /cycle/.test(error.message))
    assert.throws(() => compareSchemas({}, {$ref: '#/definitions/missing'}), (error: unknown) => error instanceof BqError && error.exitCode === 2 && /points at nothing/.test(error.message))
  })

  test('a schema that is not one, or of a draft bq does not read, is a usage error', () => {
    const usage = (error: unknown) => error instanceof BqError && error.exitCode === 2
    assert.throws(() => compareSchemas([1], {}), usage)
    assert.throws(() => compareSchemas({}, {$schema: 'https://json-schema.org/draft/2020-12/schema'}), usage)
  })

  test('the next URN to mint', () => {
    assert.equal(nextUrn('urn:babel:orders:created'), 'urn:babel:orders:created.v2')
    assert.equal(nextUrn('urn:babel:orders:created.v2'), 'urn:babel:orders:created.v3')
    assert.equal(nextUrn('urn:babel:orders:created', new Set(['urn:babel:orders:created.v2'])), 'urn:babel:orders:created.v3')
  })
})

/**
 * Differential check against bq's validator: on seeded random schema pairs (NEW mostly a small
 * mutation of OLD; allOf, oneOf, not, if/then/else, patternProperties, $refs into definitions,
 * number formats, floating-point multipleOf), a "compatible" verdict must never meet a value OLD
 * accepts and NEW rejects: neither a fixed probe value nor one the witness search finds. Seeded,
 * so a failure reproduces.
 */
// CI checks 10,000 pairs; the quick loop (run-tests.js --quick) sets BQ_COMPAT_PAIRS to the first
// 2,500 of the same seeded sequence, to stay a one-minute loop.
const compatPairs = Number(process.env.BQ_COMPAT_PAIRS ?? 10_000)

describe('schema compat agrees with the validator', () => {
  test(`no compatible verdict has a witness (${compatPairs.toLocaleString('en-US')} seeded pairs)`, () => {
    const random = seeded(20261204)
    const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)]
    const types = ['string', 'integer', 'number', 'object', 'array', 'boolean', 'null']
    const gen: Record<string, (depth: number) => unknown> = {
      type: () => (random() < 0.7 ? pick(types) : [...new Set([pick(types), pick(types)])]),
      enum: () => [...new Set([pick(['a', 'b', 1, 2, true, null]), pick(['a', 'c', 3, false])])],
      const: () => pick(['a', 1, true, null]),
      minLength: () => pick([0, 1, 2]), maxLength: () => pick([1, 2, 5]), pattern: () => pick(['^a', '^b', 'x$', '^$', '^.*$', 'a']), format: () => pick(['email', 'uri', 'int32', 'int64', 'float', 'double']),
      minimum: () => pick([0, 1, 2.5]), maximum: () => pick([5, 10]), exclusiveMinimum: () => pick([0, 1]), exclusiveMaximum: () => pick([5, 10]), multipleOf: () => pick([1, 2, 3, 0.5, 0.1, 0.3]),
      minItems: () => pick([0, 1, 2]), maxItems: () => pick([1, 3]), uniqueItems: () => pick([true, false]), minProperties: () => pick([0, 1]), maxProperties: () => pick([1, 3]),
      items: (d) => (random() < 0.2 ? [schema(d), schema(d)] : schema(d)), additionalItems: (d) => schema(d), contains: (d) => schema(d),
      properties: (d) => ({a: schema(d), ...(random() < 0.5 ? {b: schema(d)} : {})}), required: () => pick([['a'], ['b'], ['a', 'b']]),
      additionalProperties: (d) => schema(d), patternProperties: (d) => (random() < 0.5 ? {'^x': schema(d)} : {[pick(['^a', '^a.*', 'b', '^x'])]: schema(d)}), propertyNames: (d) => schema(d), dependencies: (d) => ({a: random() < 0.5 ? ['b'] : schema(d)}),
      allOf: (d) => (random() < 0.5 ? [schema(d)] : [schema(d), schema(d)]), anyOf: (d) => [schema(d), schema(d)], oneOf: (d) => (random() < 0.7 ? [schema(d), schema(d)] : [schema(d), schema(d), schema(d)]), not: (d) => schema(d),
      if: (d) => schema(d), then: (d) => schema(d), else: (d) => schema(d), $ref: () => pick(['#/definitions/p', '#/definitions/q']),
    }
    const keywords = Object.keys(gen)
    function schema(depth: number): unknown {
      if (depth <= 0 || random() < 0.15) return pick([true, false, {}, {type: pick(types)}, {$ref: '#/definitions/p'}])
      const node: Record<string, unknown> = {}
      for (let i = 0, n = 1 + Math.floor(random() * 3); i < n; i++) {
        const keyword = pick(keywords)
        node[keyword] = gen[keyword](depth - 1)
      }
      return node
    }
    // Definitions are leaves (no $ref inside), so no pair has a $ref cycle.
    const definition = (): unknown => pick([{type: pick(types)}, {type: 'integer', minimum: pick([0, 10])}, {type: 'string', pattern: pick(['^a', '^$'])}, {required: ['a']}, {properties: {a: {type: pick(types)}}, additionalProperties: false}, {type: 'number', multipleOf: pick([0.1, 0.3, 1])}])
    function document(): Record<string, unknown> {
      const root = schema(2)
      const node = typeof root === 'object' && root !== null ? (root as Record<string, unknown>) : {allOf: [root]}
      return {...node, definitions: {p: definition(), q: definition()}}
    }
    function mutate(node: unknown): unknown {
      if (typeof node !== 'object' || node === null || random() < 0.3) return schema(2)
      const copy = node as Record<string, unknown>
      const keys = Object.keys(copy)
      if (keys.length === 0 || random() < 0.3) {
        const keyword = pick(keywords)
        copy[keyword] = gen[keyword](1)
      } else {
        const key = pick(keys)
        if (key === 'definitions') copy.definitions = {...(copy.definitions as object), [pick(['p', 'q'])]: definition()}
        else if (random() < 0.3) delete copy[key]
        else if (typeof copy[key] === 'object' && copy[key] !== null && !Array.isArray(copy[key]) && random() < 0.5) copy[key] = mutate(copy[key])
        else copy[key] = gen[key]?.(1) ?? copy[key]
      }
      return copy
    }
    const probes = [null, true, false, 0, 1, 2, 3, 2.5, 0.3, -1, 10, 3000000000, 1e21, 'a', 'b', 'ab', 'x', '', 'a\nb', [], [1], ['a', 'a'], [1, 'a'], {}, {a: 1}, {a: 'a'}, {b: 1}, {a: 1, b: 2}, {x1: 1}, {ab: 'a'}, {a: [], b: {}}]
    let compatible = 0
    for (let i = 0; i < compatPairs; i++) {
      const old = document()
      const next = (random() < 0.2 ? document() : {...(mutate(structuredClone(old)) as object), definitions: random() < 0.3 ? {p: definition(), q: definition()} : structuredClone(old.definitions)}) as Record<string, unknown>
      let result
      try {
        result = compareSchemas(old, next, {witness: false})
      } catch (error) {
        assert.ok(error instanceof BqError, `compat threw ${String(error)} on ${JSON.stringify(old)} → ${JSON.stringify(next)}`)
        continue
      }
      if (result.findings.length > 0) continue
      compatible++
      const [acceptsOld, acceptsNew] = [validatorOf(old), validatorOf(next)]
      if (acceptsOld === undefined || acceptsNew === undefined) continue
      for (const value of probes) {
        assert.ok(!acceptsOld(value) || acceptsNew(value), `compatible, yet ${JSON.stringify(value)} breaks: ${JSON.stringify(old)} → ${JSON.stringify(next)}`)
      }
      const witness = findWitness(old, next, {tries: 60, seed: i})
      assert.equal(witness, undefined, `compatible, yet the witness ${JSON.stringify(witness?.value)} breaks: ${JSON.stringify(old)} → ${JSON.stringify(next)}`)
    }
    assert.ok(compatible > compatPairs / 20, `only ${compatible} compatible pairs were checked`)
  })
})
