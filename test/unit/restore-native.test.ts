/**
 * Native properties in an export line (the `native` key) and back: writing, reading, refusing a
 * broken one; the tagged JSON of bytes and dates; RabbitMQ's user_id, which a restore cannot set.
 * The round trips on live brokers are test/brokers/<broker>/restore.test.ts.
 */
import assert from 'node:assert/strict'
import {test} from 'node:test'

import {readExportLine, wrapExportLine} from '../../src/lib/envelope/export-line.js'
import {decode, make} from '../../src/lib/envelope/index.js'
import {fromNativeJson, toNativeJson} from '../../src/lib/brokers/shared/native-json.js'
import {rabbitNativeProperties, rabbitRestoreOptions} from '../../src/lib/brokers/rabbitmq/restore.js'

const envelopeText = make('urn:babel:orders:created', '{"order_id":1}', {queue: 'orders'}).text
const native = {broker: 'rabbitmq', properties: {content_encoding: 'utf-8', delivery_mode: 1, headers: {'x-bytes': {$binary: 'AAH+'}}}}

test('a backup line carries the native properties after the headers and reads them back', () => {
  const envelope = decode(envelopeText)
  const line = wrapExportLine(envelope.text, envelope.root, {a: '1'}, native)
  assert.equal(line, `{"envelope":${envelopeText},"headers":{"a":"1"},"native":${JSON.stringify(native)}}`)
  assert.deepEqual(readExportLine(line), {kind: 'wrapped', envelope: envelopeText, headers: {a: '1'}, native})
})

test('an older line without native still reads as before; a broken native says where', () => {
  assert.deepEqual(readExportLine(`{"envelope":${envelopeText},"headers":{}}`), {kind: 'wrapped', envelope: envelopeText, headers: {}})
  for (const bad of ['[]', '{"properties":{}}', '{"broker":"rabbitmq","properties":[]}', '"x"']) {
    const read = readExportLine(`{"envelope":${envelopeText},"headers":{},"native":${bad}}`)
    assert.equal(read.kind, 'broken', bad)
    assert.equal((read as {path: string}).path, '$.native')
  }
})

test('bytes and dates survive JSON as tagged values; the rest is itself', () => {
  const value = {b: Buffer.from([0, 1, 254]), d: new Date(1_700_000_000_123), n: [1, 'two', true, null], t: {'!': 'timestamp', value: 17}}
  const json = JSON.parse(JSON.stringify(toNativeJson(value))) as unknown
  assert.deepEqual(json, {b: {$binary: 'AAH+'}, d: {$timestamp: 1_700_000_000_123}, n: [1, 'two', true, null], t: {'!': 'timestamp', value: 17}})
  assert.deepEqual(fromNativeJson(json), value)
})

test('rabbitmq: a restore leaves out a user_id other than the connecting user\'s and says which', () => {
  const recorded = rabbitNativeProperties({userId: 'alice', appId: 'theirs', headers: {'x-delivery-count': 3, tenant: 'acme'}} as never)
  assert.deepEqual(recorded.properties, {user_id: 'alice', app_id: 'theirs', headers: {tenant: 'acme'}}, 'a quorum queue\'s delivery count is not recorded')
  const restore = rabbitRestoreOptions({body: Buffer.alloc(0), fields: null, runId: 'run-1'}, recorded, 'guest')
  assert.deepEqual(restore.dropped, {property: 'user_id', value: 'alice'})
  assert.deepEqual(restore.options, {appId: 'theirs', headers: {tenant: 'acme', 'bq-run-id': 'run-1'}})
  assert.equal(rabbitRestoreOptions({body: Buffer.alloc(0), fields: null}, recorded, 'alice').options.userId, 'alice')
})
