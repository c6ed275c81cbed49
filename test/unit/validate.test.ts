import {describe, test} from 'node:test'
import assert from 'node:assert/strict'

import {validateEnvelopeText} from '../../src/lib/envelope/index.js'
import type {Problem} from '../../src/lib/envelope/index.js'

const good = {
  job: 'urn:babel:orders:created',
  trace_id: '7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b',
  data: {order_id: 1042},
  meta: {id: 'f1e2d3c4-b5a6-4789-90ab-cdef01234567', queue: 'orders', lang: 'php', schema_version: 1, created_at: 1749132727000},
  attempts: 0,
}

function problemsOf(value: unknown): Problem[] {
  return validateEnvelopeText(typeof value === 'string' ? value : JSON.stringify(value)).problems
}
function codes(value: unknown): string[] {
  return problemsOf(value).map((p) => `${p.severity}:${p.code}@${p.path}`).sort()
}
const withMeta = (meta: Record<string, unknown>) => ({...good, meta: {...good.meta, ...meta}})

describe('validateEnvelopeText', () => {
  test('a canonical envelope has no problems', () => {
    assert.deepEqual(problemsOf(good), [])
  })
  test('reports every problem at once, with paths', () => {
    const bad = {trace_id: 5, data: [], meta: {id: 'x', lang: 'ruby', schema_version: '1', created_at: -1}, attempts: 1.5}
    assert.deepEqual(codes(bad), [
      'error:attempts.type@$.attempts',
      'error:data.type@$.data',
      'error:job.missing@$.job',
      'error:meta.created_at.negative@$.meta.created_at',
      'error:meta.lang.unknown@$.meta.lang',
      'error:meta.queue.missing@$.meta.queue',
      'error:meta.schema_version.type@$.meta.schema_version',
      'error:trace_id.type@$.trace_id',
      'warning:meta.id.not_uuid@$.meta.id',
    ])
  })
  test('unsupported schema_version is an error', () => {
    assert.deepEqual(codes(withMeta({schema_version: 2})), ['error:meta.schema_version.unsupported@$.meta.schema_version'])
  })
  test('forbidden fields are errors', () => {
    assert.deepEqual(codes({...withMeta({max_retries: 3, attempts: 1, source: 'php', ts: 1}), timestamp: 1}), [
      'error:forbidden.meta.attempts@$.meta.attempts',
      'error:forbidden.meta.max_retries@$.meta.max_retries',
      'error:forbidden.meta.source@$.meta.source',
      'error:forbidden.meta.ts@$.meta.ts',
      'error:forbidden.timestamp@$.timestamp',
    ])
  })
  test('created_at in seconds is a warning', () => {
    assert.deepEqual(codes(withMeta({created_at: 1749132727})), ['warning:meta.created_at.seconds@$.meta.created_at'])
  })
  test('integers beyond 2^53 − 1 warn; beyond int64 are errors; small ones and floats are fine', () => {
    const text = JSON.stringify(good).replace('{"order_id":1042}', '{"a":9007199254740993,"b":[1,99999999999999999999],"c":9007199254740991,"d":12345678901234567.5,"e":"9007199254740993"}')
    assert.deepEqual(codes(text), ['error:number.int64@$.data.b[1]', 'warning:number.unsafe_integer@$.data.a'])
  })
  test('URN convention findings are warnings', () => {
    assert.deepEqual(codes({...good, job: 'urn:babel:Orders:created'}), ['warning:urn.uppercase@$.job'])
    assert.deepEqual(codes({...good, job: 'orders.created'}), ['warning:urn.convention@$.job'])
    assert.deepEqual(codes({...good, job: 'urn:babel:orders:1042'}), ['warning:urn.payload@$.job'])
    assert.deepEqual(codes({...good, job: 'App\\Jobs\\ProcessOrder'}), ['warning:urn.class_name@$.job'])
    assert.deepEqual(codes({...good, job: 'urn:babel:orders:invoice.requested'}), [])
    assert.deepEqual(codes({...good, job: 'urn:babel:orders:created.v2'}), [])
    assert.deepEqual(codes({...good, job: ''}), ['error:job.empty@$.job'])
  })
  test('the urn alias is accepted with a warning', () => {
    const {job, ...rest} = good
    assert.deepEqual(codes({urn: job, ...rest}), ['warning:urn.alias@$.urn'])
  })
  test('dead_letter block shape', () => {
    assert.deepEqual(codes({...good, dead_letter: {reason: 'failed', failed_at: 1749132730000, original_queue: 'orders', attempts: 3, error: null, exception: 'E', lang: 'php'}}), [])
    assert.deepEqual(codes({...good, dead_letter: {reason: 'bored', failed_at: 'x', error: 1}}), [
      'error:dead_letter.attempts.missing@$.dead_letter.attempts',
      'error:dead_letter.error.type@$.dead_letter.error',
      'error:dead_letter.failed_at.type@$.dead_letter.failed_at',
      'error:dead_letter.original_queue.missing@$.dead_letter.original_queue',
      'error:dead_letter.reason.unknown@$.dead_letter.reason',
    ])
    assert.deepEqual(codes({...good, dead_letter: []}), ['error:dead_letter.type@$.dead_letter'])
  })
  test('bad input never throws', () => {
    const inputs = ['', '   ', '[]', '[1,2]', 'null', '"x"', '{"a":', '\u0000\u0001', '{"__proto__":{"job":"x"}}', '{' + '"a":'.repeat(10) + '1' + '}'.repeat(10), '['.repeat(100_000) + ']'.repeat(100_000)]
    for (const input of inputs) {
      const problems = problemsOf(input)
      assert.ok(problems.some((p) => p.severity === 'error'), JSON.stringify(input.slice(0, 20)))
    }
  })
  test('a __proto__ key is data, not a prototype', () => {
    const text = JSON.stringify(good).replace('"order_id":1042', '"__proto__":{"polluted":true}')
    assert.deepEqual(problemsOf(text), [])
    assert.equal(({} as Record<string, unknown>).polluted, undefined)
  })
})
