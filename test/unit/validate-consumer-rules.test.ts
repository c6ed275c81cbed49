/**
 * Validation findings for what SDK consumers accept (issue 11): a non-integer `attempts` token,
 * `dead_letter.failed_at` in seconds, an empty `meta.queue`. Each has its own stable code.
 */
import {describe, test} from 'node:test'
import assert from 'node:assert/strict'

import {validateEnvelopeText} from '../../src/lib/envelope/index.js'

const canonical =
  '{"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","data":{"order_id":1042,"amount":99.90},' +
  '"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"php","schema_version":1,"created_at":1749132727000},"attempts":0}'

function codes(text: string): string[] {
  return validateEnvelopeText(text).problems.map((p) => `${p.severity}:${p.code}@${p.path}`).sort()
}
const withAttempts = (token: string) => canonical.replace('"attempts":0}', `"attempts":${token}}`)
const withDeadLetter = (failedAt: string) => canonical.replace(/}$/, `,"dead_letter":{"reason":"failed","failed_at":${failedAt},"original_queue":"orders","attempts":3}}`)

describe('attempts written as a non-integer token', () => {
  test('the canonical envelope (a decimal in data) has no findings', () => {
    assert.deepEqual(codes(canonical), [])
  })
  for (const token of ['1.0', '1e0', '1E0', '0.0', '10e-1', '1.000', '0.1e1', '1e+0']) {
    test(`"attempts": ${token} is a warning`, () => {
      assert.deepEqual(codes(withAttempts(token)), ['warning:attempts.non_integer_token@$.attempts'])
      const [problem] = validateEnvelopeText(withAttempts(token)).problems
      assert.match(problem.message, new RegExp(`written ${token.replace(/[.+]/g, '\\$&')}, not as an integer literal`))
    })
  }
  test('whitespace around the colon, and a key spelled with escapes, are still seen', () => {
    assert.deepEqual(codes(canonical.replace('"attempts":0}', '"attempts" :\n 1.0 }')), ['warning:attempts.non_integer_token@$.attempts'])
    assert.deepEqual(codes(canonical.replace('"attempts":0}', '"att\\u0065mpt\\u0073":2.0}')), ['warning:attempts.non_integer_token@$.attempts'])
  })
  test('integer tokens are fine; a real fraction stays the type error', () => {
    for (const token of ['0', '3', '12']) assert.deepEqual(codes(withAttempts(token)), [])
    assert.deepEqual(codes(withAttempts('1.5')), ['error:attempts.type@$.attempts'])
  })
  test('only the top-level attempts counts: the last duplicate, not one inside data or dead_letter', () => {
    assert.deepEqual(codes(canonical.replace('"order_id":1042', '"order_id":1042,"attempts":1.0')), [])
    assert.deepEqual(codes(canonical.replace('"attempts":0}', '"attempts":1.0,"attempts":1}')), [])
    assert.deepEqual(codes(canonical.replace('"attempts":0}', '"attempts":1,"attempts":1.0}')), ['warning:attempts.non_integer_token@$.attempts'])
    assert.deepEqual(codes(withDeadLetter('1749132730000').replace('"attempts":3}', '"attempts":3.0}')), [])
  })
})

describe('dead_letter.failed_at in seconds', () => {
  test('seconds warn, with the same threshold as meta.created_at', () => {
    assert.deepEqual(codes(withDeadLetter('1749132730')), ['warning:dead_letter.failed_at.seconds@$.dead_letter.failed_at'])
    assert.deepEqual(codes(withDeadLetter('99999999999')), ['warning:dead_letter.failed_at.seconds@$.dead_letter.failed_at'])
    assert.deepEqual(
      codes(canonical.replace('"created_at":1749132727000', '"created_at":99999999999')),
      ['warning:meta.created_at.seconds@$.meta.created_at'],
    )
  })
  test('milliseconds, zero and non-counts are not seconds warnings', () => {
    assert.deepEqual(codes(withDeadLetter('1749132730000')), [])
    assert.deepEqual(codes(withDeadLetter('100000000000')), [])
    assert.deepEqual(codes(withDeadLetter('0')), [])
    assert.deepEqual(codes(withDeadLetter('-5')), ['error:dead_letter.failed_at.negative@$.dead_letter.failed_at'])
    assert.deepEqual(codes(withDeadLetter('"1749132730"')), ['error:dead_letter.failed_at.type@$.dead_letter.failed_at'])
  })
})

describe('meta.queue empty', () => {
  test('an empty string has its own code; a non-string keeps the type code', () => {
    assert.deepEqual(codes(canonical.replace('"queue":"orders"', '"queue":""')), ['error:meta.queue.empty@$.meta.queue'])
    assert.deepEqual(codes(canonical.replace('"queue":"orders"', '"queue":7')), ['error:meta.queue.type@$.meta.queue'])
    assert.deepEqual(codes(canonical.replace('"queue":"orders"', '"queue":null')), ['error:meta.queue.type@$.meta.queue'])
  })
})
