/**
 * How `bq trace` reads an id and what it compares: the trace_id ↔ OpenTelemetry TraceID mapping of
 * spec-observability.md (a UUID's 16 bytes; else the first 16 bytes of SHA-256), and the byte
 * test a body passes before it is decoded.
 */
import assert from 'node:assert/strict'
import {createHash} from 'node:crypto'
import {describe, test} from 'node:test'

import {make} from '../../src/lib/envelope/index.js'
import {matchOf, otelTraceIdOf, traceTarget} from '../../src/lib/ops/trace-id.js'
import {couldMatch} from '../../src/lib/ops/trace-prefilter.js'

const uuid = '0f8fad5b-d9cb-469f-a165-70867728950e'

describe('trace_id ↔ OTel TraceID', () => {
  test('a UUID maps to its 16 bytes; any other string to the first 16 bytes of its SHA-256', () => {
    assert.equal(otelTraceIdOf(uuid), '0f8fad5bd9cb469fa16570867728950e')
    assert.equal(otelTraceIdOf(uuid.toUpperCase()), '0f8fad5bd9cb469fa16570867728950e')
    assert.equal(otelTraceIdOf('order-1042'), createHash('sha256').update('order-1042').digest('hex').slice(0, 32))
    assert.equal(otelTraceIdOf('ünïcode'), createHash('sha256').update(Buffer.from('ünïcode', 'utf8')).digest('hex').slice(0, 32))
  })

  test('an id reads as a UUID, a TraceID (32 hex) or anything else, and matches what it names', () => {
    const byUuid = traceTarget(uuid.toUpperCase())
    assert.equal(byUuid.form, 'uuid')
    assert.equal(matchOf(byUuid, uuid, undefined), 'trace_id')
    assert.equal(matchOf(byUuid, 'other', uuid), 'meta.id')
    assert.equal(matchOf(byUuid, 'other', 'other'), undefined)
    const byOtel = traceTarget('0F8FAD5BD9CB469FA16570867728950E')
    assert.equal(byOtel.form, 'otel')
    assert.equal(matchOf(byOtel, uuid, undefined), 'trace_id')
    const hashed = traceTarget(otelTraceIdOf('order-1042'))
    assert.equal(matchOf(hashed, 'order-1042', undefined), 'otel_trace_id')
    assert.equal(matchOf(hashed, 'order-1043', undefined), undefined)
    const other = traceTarget('  order-1042 ')
    assert.equal(other.form, 'other')
    assert.equal(matchOf(other, 'order-1042', undefined), 'trace_id')
  })
})

describe('the byte test before decoding', () => {
  const body = (traceId: string) => make('urn:babel:orders:created', '{"n":1}', {traceId}).toBuffer()

  test('a body holding the id in any of its spellings passes; one without it does not', () => {
    assert.ok(couldMatch(body(uuid), traceTarget(uuid)))
    assert.ok(couldMatch(body(uuid.toUpperCase()), traceTarget(uuid)))
    assert.ok(couldMatch(body(uuid), traceTarget(otelTraceIdOf(uuid))))
    assert.ok(!couldMatch(body('6ba7b810-9dad-11d1-80b4-00c04fd430c8'), traceTarget(uuid)))
  })

  test('for a TraceID of a non-UUID trace_id, the trace_id values in the bytes are hashed', () => {
    const target = traceTarget(otelTraceIdOf('order-1042'))
    assert.ok(couldMatch(body('order-1042'), target))
    assert.ok(!couldMatch(body('order-1043'), target))
    assert.ok(couldMatch(Buffer.from('{"data":{"trace_id":"x"}, "trace_id" : "order-1042"}'), target), 'every "trace_id" value, spaces allowed')
    assert.ok(couldMatch(Buffer.from('{"trace_id":"order-\\u0031042"}'), target), 'an escaped value is left to the decoder')
  })

  test('a non-ASCII id is looked for as written and as JSON escapes it', () => {
    const target = traceTarget('café "1"')
    assert.ok(couldMatch(Buffer.from(JSON.stringify({trace_id: 'café "1"'})), target))
  })

  // JSON may spell any character as \uXXXX, and '/' as \/: an id written that way holds none of
  // the plain byte strings, so a body with an escape that could spell part of it is decoded.
  test('an id written with JSON escapes passes; an escape that cannot spell part of it does not', () => {
    const escapedHex = `{"trace_id":"\\u0030${uuid.slice(1)}"}`
    assert.ok(couldMatch(Buffer.from(escapedHex), traceTarget(uuid)), 'a UUID with an escaped digit')
    assert.ok(couldMatch(Buffer.from(escapedHex.replace('\\u0030', '0').replace('-', '\\u002D')), traceTarget(uuid)), 'an escaped dash')
    assert.ok(couldMatch(Buffer.from(`{"meta":{"id":"${uuid.slice(0, 9)}\\u0064${uuid.slice(10)}"}}`), traceTarget(uuid)), 'an escaped letter of a meta.id')
    assert.ok(couldMatch(Buffer.from('{"trace\\u005fid":"order-1042"}'), traceTarget(otelTraceIdOf('order-1042'))), 'a hashed TraceID whose trace_id key is escaped')
    assert.ok(couldMatch(Buffer.from('{"trace_id":"tenant\\/42"}'), traceTarget('tenant/42')), "PHP's escaped slash")
    assert.ok(couldMatch(Buffer.from('{"trace_id":"caf\\u00e9"}'), traceTarget('café')), "Python's ensure_ascii")
    // Python writes every non-ASCII character of the data this way: no reason to decode for a UUID.
    assert.ok(!couldMatch(Buffer.from(`{"trace_id":"6ba7b810-9dad-11d1-80b4-00c04fd430c8","data":{"name":"Ren\\u00e9e","path":"a\\/b","q":"\\"x\\""}}`), traceTarget(uuid)))
  })
})
