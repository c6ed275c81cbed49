import {describe, test} from 'node:test'
import assert from 'node:assert/strict'

import {UnsupportedPattern, linearRegExp} from '../../src/lib/linear-regexp.js'
import {SchemaRegistry} from '../../src/lib/schema/registry.js'
import {parseSelector} from '../../src/lib/ops/match.js'
import {UsageError} from '../../src/lib/errors.js'

const evil = 'a'.repeat(40) + '!'

describe('linearRegExp', () => {
  test('^(a+)+$ against 40 a\'s and a "!" answers at once', () => {
    const started = performance.now()
    assert.equal(linearRegExp('^(a+)+$', 'u').test(evil), false)
    assert.equal(linearRegExp('^(a+)+$', 'u').test('a'.repeat(41)), true)
    assert.ok(performance.now() - started < 1000)
  })

  test('answers as JavaScript does, \\s and . included', () => {
    const cases: [string, string, string][] = [
      ['^[a-z]+$', 'u', 'abc'], ['^\\p{L}+$', 'u', 'héllo'], ['^\\s$', 'u', '\u00a0'], ['^\\s$', 'u', '\v'], ['^\\S$', 'u', '\ufeff'],
      ['^[\\s]$', 'u', '\u2028'], ['^.$', 'u', '\u2028'], ['^.$', 'u', '\r'], ['^.$', 'su', '\u2028'], ['^[.]$', 'u', 'x'], ['^[^]$', 'u', '\n'],
      ['ABC', 'iu', 'xabcx'], ['^b$', 'mu', 'a\nb'], ['^b$', 'u', 'a\nb'], ['^a$', 'u', 'a\n'], ['(?<y>\\d{4})-\\d\\d', 'u', '2024-05'], ['\\u{1F600}', 'u', '😀'], ['^\\w+$', 'u', 'é'],
    ]
    for (const [source, flags, input] of cases) assert.equal(linearRegExp(source, flags).test(input), new RegExp(source, flags).test(input), `/${source}/${flags} on ${JSON.stringify(input)}`)
  })

  test('backreferences and lookaround are refused, naming the pattern', () => {
    for (const [source, feature] of [['^(a)\\1$', 'backreference'], ['(?<n>a)\\k<n>', 'backreference'], ['(?=a)a', 'lookaround'], ['(?!a)b', 'lookaround'], ['(?<=a)b', 'lookaround'], ['(?<!a)b', 'lookaround']]) {
      assert.throws(() => linearRegExp(source, 'u'), (error: unknown) => error instanceof UnsupportedPattern && error.message.includes(JSON.stringify(source)) && error.message.includes(feature))
    }
    // In a class, "(?=" is three characters.
    assert.equal(linearRegExp('^[(?=]+$', 'u').test('(?='), true)
  })

  test('a syntax error is the native SyntaxError', () => {
    assert.throws(() => linearRegExp('^\\-$', 'u'), SyntaxError)
  })
})

describe('the engine behind bq\'s validator and --select', () => {
  test('a schema pattern and patternProperties run in linear time', () => {
    const registry = SchemaRegistry.fromSchema('urn:t:evil', {type: 'object', properties: {name: {type: 'string', pattern: '^(a+)+$'}}, patternProperties: {'^(b+)+$': {type: 'integer'}}})
    const started = performance.now()
    assert.deepEqual(registry.check('urn:t:evil', {name: evil})?.map((p) => p.code), ['schema.pattern'])
    assert.deepEqual(registry.check('urn:t:evil', {name: 'aaa', ['b'.repeat(40) + '!']: 'x', bbb: 'x'})?.map((p) => p.path), ['$.data.bbb'])
    assert.ok(performance.now() - started < 1000)
  })

  test('a schema with a lookaround is a usage error naming the schema', () => {
    assert.throws(() => SchemaRegistry.fromSchema('urn:t:look', {type: 'string', pattern: '(?=a)a'}, 'look.json'), (error: unknown) => error instanceof UsageError && /^look\.json: pattern "\(\?=a\)a" uses a lookaround/.test(error.message))
  })

  test('--select KEY~REGEX matches in linear time and refuses a backreference', () => {
    const selector = parseSelector('reason~^(a+)+$')
    assert.equal(selector.text, 'reason~^(a+)+$')
    assert.throws(() => parseSelector('reason~(a)\\1'), (error: unknown) => error instanceof UsageError && /backreference/.test(error.message))
  })
})
