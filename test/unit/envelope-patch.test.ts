import {describe, test} from 'node:test'
import assert from 'node:assert/strict'

import {decode, resetForRedrive} from '../../src/lib/envelope/index.js'
import type {Envelope} from '../../src/lib/envelope/index.js'
import {prettyData, withEditedData} from '../../src/lib/envelope/edit-data.js'
import {JsonSyntaxError} from '../../src/lib/envelope/json-tree.js'
import {normalizeNumber} from '../../src/lib/envelope/json-value.js'
import {applyEnvelopePatch, parsePatch} from '../../src/lib/envelope/patch.js'
import {UsageError} from '../../src/lib/errors.js'

/** Spacing, escapes, number spellings, integer-like keys and a duplicate: what a JSON round trip would change. */
const text =
  '{ "job" : "urn:babel:orders:created", "trace_id":"t-1",\n' +
  '  "data": { "amount" : 99.90, "big": 123456789012345678901234567890, "s": "caf\\u00e9", "2": "b", "1": "a",\n' +
  '            "items": [ 1 , 2.50 , {"sku": "A-1"} ], "dup": 1, "dup": 2, "nested": {"deep": [1e3]} },\n' +
  '  "meta": {"id": "m-1", "queue": "orders"}, "attempts": 3,\n' +
  '  "dead_letter": {"reason": "failed", "original_queue": "orders"} }'

function patched(operations: unknown[] | string, envelope: Envelope = decode(text)): string {
  const outcome = applyEnvelopePatch(envelope, parsePatch(typeof operations === 'string' ? operations : JSON.stringify(operations), 'test patch'))
  assert.ok('envelope' in outcome, 'error' in outcome ? outcome.error : '')
  return outcome.envelope.text
}

/** `operations` as patch text: a string is used as it is (numbers beyond 2^53 must be written out). */
function failure(operations: unknown[] | string): string {
  const outcome = applyEnvelopePatch(decode(text), parsePatch(typeof operations === 'string' ? operations : JSON.stringify(operations), 'test patch'))
  assert.ok('error' in outcome, 'the patch should have failed')
  return outcome.error
}

describe('redrive --patch: JSON Patch spliced into the original text', () => {
  test('replace changes one value; every other byte stays, numbers beyond 2^53 included', () => {
    assert.equal(patched([{op: 'replace', path: '/data/amount', value: 10}]), text.replace('99.90', '10'))
  })

  test('a replacement number keeps the spelling the patch gives it, even beyond 2^53', () => {
    const patch = parsePatch('[{"op":"replace","path":"/data/amount","value":10.00},{"op":"replace","path":"/data/items/0","value":98765432109876543210987}]', 'p')
    const outcome = applyEnvelopePatch(decode(text), patch)
    assert.ok('envelope' in outcome)
    assert.equal(outcome.envelope.text, text.replace('99.90', '10.00').replace('[ 1 ,', '[ 98765432109876543210987 ,'))
  })

  test('add appends a member (and an array item) after the original ones', () => {
    assert.equal(patched([{op: 'add', path: '/data/note', value: 'x'}]), text.replace('[1e3]} }', '[1e3]},"note":"x" }'))
    assert.equal(patched([{op: 'add', path: '/data/items/-', value: 3}]), text.replace('{"sku": "A-1"} ]', '{"sku": "A-1"},3 ]'))
  })

  test('add into the middle of an array keeps the moved items spelled as they were', () => {
    const out = patched([{op: 'add', path: '/data/items/0', value: 0}])
    assert.match(out, /"items": \[ 0 , 1 , 2\.50,\{"sku": "A-1"\} \]/)
  })

  test('remove drops a member with its separator; removing a duplicated key drops both copies', () => {
    assert.equal(patched([{op: 'remove', path: '/data/s'}]), text.replace(' "s": "caf\\u00e9",', ''))
    assert.equal(patched([{op: 'remove', path: '/data/dup'}]), text.replace(' "dup": 1, "dup": 2,', ''))
  })

  test('a duplicate key: the last one is changed, the shadowed one kept as it was', () => {
    assert.equal(patched([{op: 'replace', path: '/data/dup', value: 3}]), text.replace('"dup": 2', '"dup": 3'))
  })

  test('move and copy: a moved value keeps its bytes; a copied number its value', () => {
    const moved = patched([{op: 'move', from: '/data/nested', path: '/meta/nested'}])
    assert.equal(moved, text.replace(', "nested": {"deep": [1e3]} }', ' }').replace('"queue": "orders"}', '"queue": "orders","nested":{"deep": [1e3]}}'))
    const copied = JSON.parse(patched([{op: 'copy', from: '/data/big', path: '/meta/big'}]).replace(/(\d{20,})/g, '"$1"'))
    assert.equal(copied.meta.big, '123456789012345678901234567890')
  })

  test('test compares numbers by value (99.9 equals 99.90) and strings by their decoded value', () => {
    assert.equal(patched([{op: 'test', path: '/data/amount', value: 99.9}, {op: 'test', path: '/data/s', value: 'café'}]), text)
    assert.equal(patched('[{"op":"test","path":"/data/big","value":1234567890123456789012345678.9e2}]'), text)
    // The digits beyond 2^53 count: a number equal only as a double does not pass.
    assert.match(failure('[{"op":"test","path":"/data/big","value":123456789012345678901234567891}]'), /the value there is not 123456789012345678901234567891$/)
  })

  test('a failing operation fails the whole patch, with its number and what it was', () => {
    assert.match(failure([{op: 'replace', path: '/data/amount', value: 1}, {op: 'test', path: '/data/s', value: 'tea'}]), /^patch operation 2 \(test \/data\/s\): the value there is not "tea"$/)
    assert.match(failure([{op: 'remove', path: '/data/missing'}]), /^patch operation 1 \(remove \/data\/missing\)/)
    assert.match(failure([{op: 'add', path: '/data/amount/x', value: 1}]), /goes inside a number/)
  })

  test('untouched envelope: a patch whose tests pass and that changes nothing keeps every byte', () => {
    assert.equal(patched([{op: 'test', path: '/dead_letter/reason', value: 'failed'}]), text)
  })

  test('the reset after a patch removes dead_letter and zeroes attempts, keeping the rest', () => {
    const envelope = decode(patched([{op: 'replace', path: '/meta/queue', value: 'orders-v2'}]))
    const reset = resetForRedrive(envelope).text
    assert.ok(!reset.includes('dead_letter'))
    assert.match(reset, /"attempts": 0/)
    assert.match(reset, /"big": 123456789012345678901234567890/)
    assert.match(reset, /"queue": "orders-v2"/)
  })

  test('parsePatch refuses writes outside /data and /meta/..., malformed operations and bad JSON', () => {
    for (const path of ['/dead_letter/reason', '/attempts', '/job', '/meta', '']) {
      assert.throws(() => parsePatch(JSON.stringify([{op: 'replace', path, value: 1}]), 'p'), UsageError, path)
    }
    assert.throws(() => parsePatch(JSON.stringify([{op: 'move', from: '/attempts', path: '/data/a'}]), 'p'), /writes outside/)
    assert.throws(() => parsePatch('[{"op":"frobnicate","path":"/data/a"}]', 'p'), /operation 1/)
    assert.throws(() => parsePatch('[{"op":"add","path":"/data/a"}]', 'p'), /operation 1/)
    assert.throws(() => parsePatch('[{"op": "add",\n "path": }]', 'p'), /line 2 column 10/)
    assert.throws(() => parsePatch('{"op":"add","path":"/data/a","value":1}', 'p'), /array of operations/)
    // Reading is free: test and copy's from may point anywhere.
    assert.equal(parsePatch(JSON.stringify([{op: 'test', path: '/attempts', value: 3}, {op: 'copy', from: '/job', path: '/meta/was'}]), 'p').size, 2)
  })
})

describe('normalizeNumber', () => {
  test('one spelling per value, exact at any length', () => {
    assert.equal(normalizeNumber('99.90'), '99.9')
    assert.equal(normalizeNumber('9.99e1'), '99.9')
    assert.equal(normalizeNumber('1E3'), '1000')
    assert.equal(normalizeNumber('-0.0'), '0')
    assert.equal(normalizeNumber('0.00012'), '0.00012')
    assert.equal(normalizeNumber('123456789012345678901234567890'), '123456789012345678901234567890')
    assert.equal(normalizeNumber('12e30'), '12e30')
    assert.equal(normalizeNumber('1.5e-300'), '15e-301')
  })
})

describe('dlq edit: edited data spliced back', () => {
  test('prettyData shows data with its own spellings', () => {
    const pretty = prettyData(decode(text)) ?? ''
    assert.match(pretty, /^{\n {2}"amount": 99\.90,\n {2}"big": 123456789012345678901234567890,\n {2}"s": "caf\\u00e9",/)
  })

  test('editing one value in the pretty text changes only that value in the message', () => {
    const envelope = decode(text)
    const pretty = prettyData(envelope) ?? ''
    assert.equal(withEditedData(envelope, pretty).text, text)
    assert.equal(withEditedData(envelope, pretty.replace('99.90', '10.00')).text, text.replace('99.90', '10.00'))
    assert.equal(withEditedData(envelope, pretty.replace('"A-1"', '"B-2"')).text, text.replace('"A-1"', '"B-2"'))
  })

  test('edited text that is not JSON throws with the offset', () => {
    assert.throws(() => withEditedData(decode(text), '{"amount": }'), JsonSyntaxError)
  })
})
