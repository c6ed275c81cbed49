/**
 * The SDKs' Redis `__bq_frame` frame (src/lib/envelope/frame.ts) against the Python SDK's own
 * stored values, byte for byte, plus the redis binding's side (frames.ts) and the poison rule.
 */
import {describe, test} from 'node:test'
import assert from 'node:assert/strict'

import {messageOf, storedOf} from '../../src/lib/brokers/redis/frames.js'
import {EnvelopeDecodeError, decodeEnvelope, fieldsOf, resetForRedriveBytes} from '../../src/lib/envelope/index.js'
import {mayBeFrame, readFrame, writeFrame} from '../../src/lib/envelope/frame.js'
import {checkMessage} from '../../src/lib/ops/validate-messages.js'
import {pythonRedriveBypass, pythonSdk} from '../support/interop.js'

const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'

function frameOf(value: string) {
  const reading = readFrame(Buffer.from(value))
  assert.equal(reading.kind, 'frame', value)
  return reading as Extract<typeof reading, {kind: 'frame'}>
}

describe('the __bq_frame codec on the Python SDK samples', () => {
  test('the three traced publishes are frames: their traceparent and the exact envelope bytes', () => {
    for (const [i, value] of pythonSdk.published.slice(0, 3).entries()) {
      const frame = frameOf(value)
      assert.deepEqual(frame.headers, {traceparent: TRACEPARENT})
      assert.equal(frame.body.toString('utf8'), (JSON.parse(value) as {body: string}).body)
      const envelope = decodeEnvelope(frame.body)
      assert.equal(envelope.urn, 'urn:babel:orders:created')
      // The big integer inside survives: the body is a string in the frame, never re-encoded.
      assert.match(envelope.text, new RegExp(`"order_id":${i},"amount":99.9,"n":9007199254740993`))
    }
  })

  test('re-framing the body and headers yields the stored bytes exactly', () => {
    for (const value of [...pythonSdk.published.slice(0, 3), ...pythonRedriveBypass.after_python_redrive_bypass_to_sandbox]) {
      const frame = frameOf(value)
      assert.equal(writeFrame(frame.body, frame.headers).toString('utf8'), value)
    }
  })

  test('a bare envelope and the SDK dead letters are not frames, and cost no parse', () => {
    for (const value of [pythonSdk.published[3], ...pythonSdk.dlq, ...pythonRedriveBypass.dlq_before]) {
      assert.equal(mayBeFrame(Buffer.from(value)), false)
      assert.deepEqual(readFrame(Buffer.from(value)), {kind: 'bare'})
    }
  })

  test("bq's reset and bypass frame of the dead letter is the SDK's redrive-with-bypass value, byte for byte", () => {
    const dead = decodeEnvelope(pythonRedriveBypass.dlq_before[0])
    const fields = {...fieldsOf(dead), attempts: 0}
    const stored = storedOf({body: resetForRedriveBytes(dead), fields, bypass: true})
    assert.equal(stored.toString('utf8'), pythonRedriveBypass.after_python_redrive_bypass_to_sandbox[0])
  })
})

describe('readFrame: only a top-level __bq_frame makes a frame', () => {
  test('the key nested in data, inside a string, or in invalid JSON is no frame', () => {
    const nested = '{"job":"urn:a:b","data":{"__bq_frame":1},"meta":{"id":"x"}}'
    assert.equal(mayBeFrame(nested), true)
    assert.deepEqual(readFrame(nested), {kind: 'bare'})
    assert.deepEqual(readFrame('{"job":"urn:a:b","data":{"s":"\\"__bq_frame\\""}}'), {kind: 'bare'})
    assert.deepEqual(readFrame('{"__bq_frame":1,'), {kind: 'bare'})
    assert.deepEqual(readFrame('["__bq_frame"]'), {kind: 'bare'})
  })

  test('absent headers read as none; a __proto__ header stays a plain entry', () => {
    assert.deepEqual(readFrame('{"__bq_frame":1,"body":"{}"}'), {kind: 'frame', headers: {}, body: Buffer.from('{}')})
    const frame = frameOf('{"__bq_frame":1,"headers":{"__proto__":"x"},"body":"{}"}')
    assert.equal(Object.getPrototypeOf(frame.headers), Object.prototype)
    assert.deepEqual(Object.entries(frame.headers), [['__proto__', 'x']])
  })

  test('a broken frame is malformed, with the reason', () => {
    const cases: Array<[string, RegExp]> = [
      ['{"__bq_frame":2,"headers":{},"body":"{}"}', /version is 2, not 1/],
      ['{"__bq_frame":"1","headers":{},"body":"{}"}', /version is "1"/],
      ['{"__bq_frame":1,"headers":[],"body":"{}"}', /"headers" is not an object/],
      ['{"__bq_frame":1,"headers":{"n":1},"body":"{}"}', /header "n" is not a string/],
      ['{"__bq_frame":1,"headers":{}}', /"body" is missing/],
      ['{"__bq_frame":1,"headers":{},"body":{"job":"urn:a:b"}}', /"body" is not a string/],
      ['{"__bq_frame":1,"headers":{},"body":"\\ud800"}', /lone surrogate/],
    ]
    for (const [value, reason] of cases) {
      const reading = readFrame(value)
      assert.equal(reading.kind, 'malformed', value)
      assert.match((reading as {reason: string}).reason, reason)
    }
  })

  test('writeFrame keeps non-ASCII text and refuses bytes that are not UTF-8', () => {
    const body = Buffer.from('{"job":"urn:a:b","data":{"s":"café \\"q\\""}}')
    const stored = writeFrame(body, {a: 'é'})
    assert.equal(stored.toString('utf8'), `{"__bq_frame":1,"headers":{"a":"é"},"body":${JSON.stringify(body.toString())}}`)
    assert.deepEqual(frameOf(stored.toString('utf8')).body, body)
    assert.throws(() => writeFrame(Buffer.from([0xff]), {}), /not UTF-8/)
  })
})

describe('a frame is never an envelope', () => {
  test('the decoder calls a frame (even one around job and meta) poison, a broken one with its reason', () => {
    const sneaky = '{"__bq_frame":1,"job":"urn:a:b","meta":{"id":"x"}}'
    assert.throws(() => decodeEnvelope(sneaky), (error: unknown) => error instanceof EnvelopeDecodeError && /"body" is missing/.test(error.message))
    assert.throws(() => decodeEnvelope(pythonSdk.published[0]), /a __bq_frame frame \(the SDKs' Redis wrapper\) where a bare envelope belongs/)
  })
})

describe('the Redis binding side (frames.ts)', () => {
  test('messageOf unwraps: body, headers, appHeaders without the marker, stored, replayBypass', () => {
    const traced = Buffer.from(pythonSdk.published[0])
    const message = messageOf(traced, '0')
    assert.equal(message.body.toString(), (JSON.parse(pythonSdk.published[0]) as {body: string}).body)
    assert.deepEqual(message.headers, {traceparent: TRACEPARENT})
    assert.deepEqual(message.appHeaders, {traceparent: TRACEPARENT})
    assert.equal(message.stored, traced)
    assert.deepEqual(message.native, {})
    const bypassed = messageOf(Buffer.from(pythonRedriveBypass.after_python_redrive_bypass_to_sandbox[0]), '1')
    assert.deepEqual(bypassed.native, {replayBypass: true})
    assert.deepEqual(bypassed.appHeaders, {})
    assert.deepEqual(bypassed.headers, {'bq-replay-bypass': '1'})
  })

  test('a bare value and a broken frame are their own body, with nothing else', () => {
    for (const value of [pythonSdk.published[3], '{"__bq_frame":1,"headers":{}}']) {
      const stored = Buffer.from(value)
      assert.deepEqual(messageOf(stored, '3'), {body: stored, headers: {}, native: {}, position: '3'})
    }
  })

  test('storedOf: bare bytes unless headers or bypass; the marker follows bypass alone', () => {
    const body = Buffer.from(pythonSdk.published[3])
    assert.equal(storedOf({body, fields: null}), body)
    assert.equal(storedOf({body, fields: null, appHeaders: {}}), body)
    assert.equal(storedOf({body, fields: null, appHeaders: {'bq-replay-bypass': '1'}}), body)
    assert.equal(
      storedOf({body, fields: null, appHeaders: {traceparent: TRACEPARENT}, bypass: true}).toString(),
      `{"__bq_frame":1,"headers":{"traceparent":"${TRACEPARENT}","bq-replay-bypass":"1"},"body":${JSON.stringify(body.toString())}}`,
    )
  })
})

describe('bq validate reads a frame line as the envelope inside', () => {
  test('a framed SDK value is valid; a broken frame is one frame.invalid error', () => {
    const ok = checkMessage({source: 'x', line: 1, text: pythonSdk.published[0]}, {})
    assert.deepEqual(
      ok.problems.filter((p) => p.severity === 'error'),
      [],
    )
    assert.equal(ok.urn, 'urn:babel:orders:created')
    const broken = checkMessage({source: 'x', line: 2, text: '{"__bq_frame":1,"headers":{"a":2},"body":"{}"}'}, {})
    assert.deepEqual(broken.problems, [{severity: 'error', code: 'frame.invalid', path: '$', message: 'a __bq_frame frame whose header "a" is not a string'}])
  })
})
