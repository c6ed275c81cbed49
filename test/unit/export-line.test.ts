/** The header-keeping export line (peek --jsonl --with-headers): writing, reading, validating; and which native headers are app headers. */
import {test} from 'node:test'
import assert from 'node:assert/strict'

import {readExportLine, wrapExportLine} from '../../src/lib/envelope/export-line.js'
import {decode, make} from '../../src/lib/envelope/index.js'
import {checkMessage} from '../../src/lib/ops/validate-messages.js'
import {isBqHeader, outgoingAppHeaders, pickAppHeaders} from '../../src/lib/brokers/shared/app-headers.js'

const envelopeText = make('urn:babel:orders:created', '{"big":9007199254740993,"amount":99.90,"s":"\\u00e9"}', {queue: 'orders'}).text
const headers = {traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'x-custom': 'v'}

test('a wrapped line embeds the envelope token for token and reads back to the same text and headers', () => {
  const envelope = decode(envelopeText)
  const line = wrapExportLine(envelope.text, envelope.root, headers)
  assert.equal(line, `{"envelope":${envelopeText},"headers":${JSON.stringify(headers)}}`)
  assert.deepEqual(readExportLine(line), {kind: 'wrapped', envelope: envelopeText, headers})
})

test('a pretty envelope is compacted on the way out, and a spaced wrapper still reads', () => {
  const pretty = JSON.stringify(JSON.parse(envelopeText), null, 2)
  const envelope = decode(pretty)
  const line = wrapExportLine(envelope.text, envelope.root, {})
  assert.ok(!line.includes('\n'))
  const spaced = `  { "headers" : {"a":"1"} , "envelope" : ${envelopeText} }`
  assert.deepEqual(readExportLine(spaced), {kind: 'wrapped', envelope: envelopeText, headers: {a: '1'}})
  assert.deepEqual(readExportLine(`{"envelope":${envelopeText}}`), {kind: 'wrapped', envelope: envelopeText, headers: {}})
})

test('an envelope line, and anything else that is not exactly the wrapper, reads as an envelope line', () => {
  for (const text of [envelopeText, `{"envelope":${envelopeText},"headers":{},"job":"x"}`, '{"headers":{}}', '{"envelope":', 'not json', '[1]']) {
    assert.deepEqual(readExportLine(text), {kind: 'envelope'}, text)
  }
})

test('a broken wrapper says where', () => {
  assert.deepEqual(readExportLine('{"envelope":[1],"headers":{}}'), {kind: 'broken', path: '$.envelope', message: 'an export line\'s "envelope" must be a JSON object (the envelope)'})
  assert.equal((readExportLine(`{"envelope":${envelopeText},"headers":[]}`) as {path: string}).path, '$.headers')
  assert.equal((readExportLine(`{"envelope":${envelopeText},"headers":{"x-n":1}}`) as {path: string}).path, '$.headers["x-n"]')
  assert.equal(readExportLine(`{"envelope":${envelopeText},"envelope":${envelopeText}}`).kind, 'broken')
})

test('validate checks the envelope inside a wrapped line, with paths under $.envelope', () => {
  const ok = checkMessage({source: 'x.jsonl', line: 1, text: `{"envelope":${envelopeText},"headers":{"a":"b"}}`}, {})
  assert.deepEqual(ok.problems.map((p) => [p.severity, p.path]), [['warning', '$.envelope.data.big']])
  assert.equal(ok.urn, 'urn:babel:orders:created')
  const bad = checkMessage({source: 'x.jsonl', line: 1, text: `{"envelope":${envelopeText.replace('"schema_version":1', '"schema_version":"1"')},"headers":{}}`}, {})
  assert.ok(bad.problems.some((p) => p.severity === 'error' && p.path === '$.envelope.meta.schema_version'), JSON.stringify(bad.problems))
  const broken = checkMessage({source: 'x.jsonl', line: 1, text: '{"envelope":"text"}'}, {})
  assert.deepEqual(broken.problems.map((p) => [p.code, p.path]), [['export.line', '$.envelope']])
})

test('app headers: bq names in either spelling, reserved names and values that would change type are left out', () => {
  assert.ok(isBqHeader('bq-job') && isBqHeader('bq_replay_bypass') && isBqHeader('BQ-Attempts') && !isBqHeader('bqx'))
  const picked = pickAppHeaders(
    {'traceparent': 't', 'bq-replay-bypass': '1', 'bq_attempts': '2', 'x-death': 's', 'x-n': 5, 'x-b': Buffer.from('ok'), 'x-bad': Buffer.from([0xff])},
    {reserved: (name) => name === 'x-death'},
  )
  assert.deepEqual(picked, {traceparent: 't'})
  assert.deepEqual(pickAppHeaders({'x-b': Buffer.from('ok'), 'x-bad': Buffer.from([0xff])}, {rule: 'utf8-bytes'}), {'x-b': 'ok'})
  assert.deepEqual(outgoingAppHeaders({body: Buffer.alloc(0), fields: null, appHeaders: {'bq-job': 'spoof', a: 'b'}}), {a: 'b'})
})
