import {describe, test} from 'node:test'
import assert from 'node:assert/strict'

import {EnvelopeDecodeError, MakeError, annotate, decode, fieldsOf, make, resetForRedrive, resetForRedriveBytes} from '../../src/lib/envelope/index.js'
import {parseJsonTree} from '../../src/lib/envelope/json-tree.js'

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

/** An envelope exercising everything a naive JSON round trip would damage. */
const tricky =
  '{"job":"urn:babel:orders:created","x-custom":{"k":[1,2]},"trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b",' +
  '"data":{"big":9007199254740993,"price":99.90,"sci":1e3,"neg":-0,"s":"caf\\u00e9 \\/ \\"q\\"","2":"b","1":"a","__proto__":{"p":1}},' +
  '"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"php","schema_version":1,"created_at":1749132727000,"host":"web-1"},' +
  '"attempts":3,"dead_letter":{"reason":"failed","error":"boom","exception":null,"failed_at":1749132730000,"original_queue":"orders","attempts":3,"lang":"php"},"zz":true}'

describe('make', () => {
  test('produces the canonical shape in spec key order', () => {
    const envelope = make('urn:babel:orders:created', {order_id: 1042}, {createdAt: 1749132727000})
    const value = JSON.parse(envelope.text)
    assert.deepEqual(Object.keys(value), ['job', 'trace_id', 'data', 'meta', 'attempts'])
    assert.deepEqual(Object.keys(value.meta), ['id', 'queue', 'lang', 'schema_version', 'created_at'])
    assert.equal(value.meta.queue, 'default')
    assert.equal(value.meta.lang, 'node')
    assert.equal(value.meta.schema_version, 1)
    assert.equal(value.meta.created_at, 1749132727000)
    assert.equal(value.attempts, 0)
    assert.match(value.trace_id, UUID_V4)
    assert.match(value.meta.id, UUID_V4)
    assert.notEqual(value.trace_id, value.meta.id)
  })
  test('continues a given trace and uses the queue', () => {
    const trace = '7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b'
    const envelope = make('urn:babel:x:y', {}, {traceId: trace, queue: 'orders'})
    assert.equal(envelope.traceId, trace)
    assert.equal(envelope.queue, 'orders')
  })
  test('created_at is Unix milliseconds', () => {
    const before = Date.now()
    const createdAt = make('urn:babel:x:y', {}).createdAt as number
    assert.ok(createdAt >= before && createdAt <= Date.now())
  })
  test('an empty URN is an error', () => {
    assert.throws(() => make('', {}), MakeError)
    assert.throws(() => make('   ', {}), MakeError)
  })
  test('data text keeps every token, compacted, with unicode and slashes unescaped where bq writes', () => {
    const envelope = make('urn:babel:a:b', '{ "n" : 9007199254740993, "p": 99.90, "s": "é/\\u00e9" }')
    assert.equal(envelope.raw('data'), '{"n":9007199254740993,"p":99.90,"s":"é/\\u00e9"}')
    const fromValue = make('urn:babel:a:b', {s: 'é/ü'})
    assert.equal(fromValue.raw('data'), '{"s":"é/ü"}')
  })
  test('data must be an object', () => {
    assert.throws(() => make('urn:babel:a:b', '[1]'), /JSON object/)
    assert.throws(() => make('urn:babel:a:b', '{"a":'), /not valid JSON/)
  })
})

describe('decode', () => {
  test('accepts urn as an alias of job', () => {
    assert.equal(decode('{"urn":"urn:babel:a:b"}').urn, 'urn:babel:a:b')
    assert.equal(decode('{"job":"urn:babel:a:b","urn":"other"}').urn, 'urn:babel:a:b')
  })
  test('non-objects are typed errors, not empty objects', () => {
    for (const [body, kind] of [['[1,2]', 'not_object'], ['"s"', 'not_object'], ['42', 'not_object'], ['null', 'not_object'], ['', 'empty'], ['{"a":', 'not_json'], ['{"a":1}x', 'not_json']] as const) {
      assert.throws(() => decode(body), (error: unknown) => error instanceof EnvelopeDecodeError && error.kind === kind, body)
    }
    assert.throws(() => decode(Buffer.from([0x7b, 0xff, 0x7d])), (e: unknown) => e instanceof EnvelopeDecodeError && e.kind === 'not_utf8')
  })
  test('100,000 levels of nesting do not overflow the stack', () => {
    const deep = '{"data":' + '['.repeat(100_000) + ']'.repeat(100_000) + '}'
    assert.equal(decode(deep).node('data')?.kind, 'array')
  })
  test('fieldsOf reads the projected values', () => {
    const fields = fieldsOf(decode(tricky))
    assert.deepEqual(fields, {
      job: 'urn:babel:orders:created', traceId: '7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b', id: 'f1e2d3c4-b5a6-4789-90ab-cdef01234567',
      queue: 'orders', lang: 'php', schemaVersion: 1, createdAt: 1749132727000, attempts: 3,
    })
  })
})

describe('lossless', () => {
  test('decode then encode returns the same bytes', () => {
    for (const text of [tricky, '{ "a" :\n 1 }', '{"a":1,"a":2}']) assert.equal(decode(text).toBuffer().toString('utf8'), text)
  })
  test('resetForRedrive changes only attempts and dead_letter', () => {
    const reset = resetForRedrive(decode(tricky))
    assert.equal(
      reset.text,
      tricky.replace('"attempts":3,"dead_letter":{"reason":"failed","error":"boom","exception":null,"failed_at":1749132730000,"original_queue":"orders","attempts":3,"lang":"php"},', '"attempts":0,'),
    )
  })
  test('resetForRedrive handles dead_letter first, last, duplicated, and a missing attempts', () => {
    assert.equal(resetForRedrive(decode('{"dead_letter":{},"job":"j","attempts":2}')).text, '{"job":"j","attempts":0}')
    assert.equal(resetForRedrive(decode('{"job":"j","attempts":2,"dead_letter":{}}')).text, '{"job":"j","attempts":0}')
    assert.equal(resetForRedrive(decode('{"job":"j","dead_letter":1,"attempts":2,"dead_letter":2}')).text, '{"job":"j","attempts":0}')
    assert.equal(resetForRedrive(decode('{"job":"j"}')).text, '{"job":"j","attempts":0}')
    assert.equal(resetForRedrive(decode('{"dead_letter":{}}')).text, '{"attempts":0}')
    assert.equal(resetForRedrive(decode('{}')).text, '{"attempts":0}')
    const pretty = '{\n  "job": "j",\n  "attempts": 3,\n  "dead_letter": {"reason": "failed"}\n}'
    assert.equal(resetForRedrive(decode(pretty)).text, '{\n  "job": "j",\n  "attempts": 0\n}')
  })
  test('resetForRedrive of a clean envelope returns it unchanged', () => {
    const envelope = decode('{"job":"j","attempts":0}')
    assert.equal(resetForRedrive(envelope), envelope)
  })
  test('annotate adds a dead_letter block to a copy, leaving the input untouched', () => {
    const original = make('urn:babel:orders:created', '{"n":9007199254740993}', {queue: 'orders'})
    const before = original.text
    const dead = annotate(original, {reason: 'failed', originalQueue: 'orders', error: 'boom', failedAt: 5, lang: 'node'})
    assert.equal(original.text, before)
    assert.ok(dead.text.startsWith(before.slice(0, -1)))
    assert.deepEqual(dead.deadLetter, {reason: 'failed', error: 'boom', exception: undefined, failedAt: 5, originalQueue: 'orders', attempts: 0, lang: 'node'})
    // Round trip: annotate then reset gives back the original bytes.
    assert.equal(resetForRedrive(dead).text, before)
  })
  test('annotate replaces an existing block in place', () => {
    const twice = annotate(annotate(decode('{"job":"j","attempts":1,"z":0}'), {reason: 'failed', originalQueue: 'a', failedAt: 1}), {reason: 'poison', originalQueue: 'b', failedAt: 2})
    assert.equal(twice.deadLetter?.reason, 'poison')
    assert.equal(twice.root.members.filter((m) => m.key === 'dead_letter').length, 1)
    assert.equal(twice.raw('z'), '0')
  })
})

describe('resetForRedriveBytes', () => {
  test('gives exactly the bytes of resetForRedrive, decoded from bytes or text, ASCII or not', () => {
    const bodies = [
      tricky,
      '{"dead_letter":{},"job":"j","attempts":2}',
      '{"job":"j","dead_letter":1,"attempts":2,"dead_letter":2}',
      '{"job":"j"}',
      '{}',
      ' { } ',
      '{"job":"j","attempts":0}',
      '{"attempts":0,"attempts":1}',
      '{\n  "job": "j",\n  "attempts": 3,\n  "dead_letter": {"reason": "failed"}\n}',
      '{"job":"café","attempts":3,"dead_letter":{"error":"naïve"}}',
      '{"job":"😀","data":{"s":"\\u00e9"},"dead_letter":{}}',
    ]
    for (const text of bodies) {
      const expected = resetForRedrive(decode(text)).toBuffer()
      assert.deepEqual(resetForRedriveBytes(decode(Buffer.from(text))), expected, text)
      assert.deepEqual(resetForRedriveBytes(decode(text)), expected, text)
      assert.deepEqual(resetForRedriveBytes(decode(new Uint8Array(Buffer.from(text)))), expected, text)
    }
  })
  test('leaves the decoded body untouched', () => {
    const body = Buffer.from(tricky)
    const copy = Buffer.from(body)
    const reset = resetForRedriveBytes(decode(body))
    assert.deepEqual(body, copy)
    reset.fill(0)
    assert.deepEqual(body, copy)
  })
})

describe('parseJsonTree errors', () => {
  const error = (text: string) => {
    try {
      parseJsonTree(text)
    } catch (e) {
      return `${(e as Error).message} @${(e as {offset: number}).offset}`
    }
    return 'parsed'
  }
  test('name the problem and where it is', () => {
    assert.equal(error(''), 'empty input @0')
    assert.equal(error('  '), 'empty input @2')
    assert.equal(error('{"a":1,}'), "unexpected '}': an object key in double quotes was expected @7")
    assert.equal(error('[1,]'), "unexpected ']': a value was expected @3")
    assert.equal(error('{"a" 1}'), "unexpected '1': ':' was expected after an object key @5")
    assert.equal(error('{"a":1'), 'unexpected end of input (truncated JSON?) @6')
    assert.equal(error('[1 2]'), "unexpected '2': expected ',' or ']' @3")
    assert.equal(error('{} x'), "unexpected 'x' after the end of the JSON value @3")
    assert.equal(error('"abc'), 'unterminated string @0')
    assert.equal(error('"a\\x"'), 'invalid escape in string @2')
    assert.equal(error('"\\u12"'), 'invalid \\u escape in string @1')
    assert.equal(error('"a\u0001"'), 'unescaped control character in string @2')
    assert.equal(error('01'), "unexpected '1' after the end of the JSON value @1")
    assert.equal(error('1.'), 'invalid number: digits expected after the decimal point @0')
    assert.equal(error('-e'), 'invalid number @0')
    assert.equal(error('1e+'), 'invalid number: digits expected in the exponent @0')
    assert.equal(error('nul'), "unexpected 'n' @0")
    assert.equal(error('{"a":tru}'), "unexpected 't' @5")
  })
})
