/** PII masking: which fields a schema marks x-gdpr-sensitive, how an envelope is masked, and how a masked export line reads. */
import {test} from 'node:test'
import assert from 'node:assert/strict'

import {maskedExportLine, readExportLine} from '../../src/lib/envelope/export-line.js'
import {decode} from '../../src/lib/envelope/index.js'
import {parseJsonTree} from '../../src/lib/envelope/json-tree.js'
import {Masker} from '../../src/lib/ops/mask.js'
import {SchemaRegistry} from '../../src/lib/schema/registry.js'
import {sensitivePathsOf} from '../../src/lib/schema/sensitive.js'

const schema = {
  type: 'object',
  definitions: {address: {type: 'object', properties: {line: {type: 'string', 'x-gdpr-sensitive': true}, country: {type: 'string'}}}},
  properties: {
    id: {type: 'integer'},
    email: {type: 'string', 'x-gdpr-sensitive': 'email'},
    profile: {type: 'object', 'x-gdpr-sensitive': false, properties: {full_name: {type: 'string', 'x-gdpr-sensitive': true}}},
    addresses: {type: 'array', items: {$ref: '#/definitions/address'}},
    contact: {allOf: [{properties: {phone: {type: 'string', 'x-gdpr-sensitive': 'phone'}}}]},
  },
}
const urn = 'urn:babel:users:registered'
const text = `{"job":"${urn}","data":{"id":9007199254740993,"email":"a@example.com","profile":{"full_name":"Alice"},"addresses":[{"line":"1 Main St","country":"TR"},{"line":"2 Side St"}],"contact":{"phone":"+90 555"},"amount":99.90},"meta":{"id":"m-1","queue":"users"},"attempts":0}`

test('sensitive paths follow properties, items, $ref and allOf, shallow ones first', () => {
  assert.deepEqual(sensitivePathsOf(schema), [
    {path: ['email'], category: 'email'},
    {path: ['profile', 'full_name'], category: 'personal'},
    {path: ['contact', 'phone'], category: 'phone'},
    {path: ['addresses', '*', 'line'], category: 'personal'},
  ])
})

test('masking replaces only the marked values and keeps every other byte', () => {
  const masked = new Masker(SchemaRegistry.fromSchema(urn, schema)).mask(decode(text))
  assert.ok(masked)
  assert.deepEqual(masked.fields, ['data.email', 'data.profile.full_name', 'data.contact.phone', 'data.addresses[*].line'])
  assert.equal(masked.text, text.replace('"a@example.com"', '"[masked:email]"').replace('"Alice"', '"[masked:personal]"').replace('"1 Main St"', '"[masked:personal]"').replace('"2 Side St"', '"[masked:personal]"').replace('"+90 555"', '"[masked:phone]"'))
  assert.match(masked.text, /"id":9007199254740993,/)
  assert.match(masked.text, /"amount":99\.90/)
  // Another URN, or one whose schema marks nothing, is not masked.
  assert.equal(new Masker(SchemaRegistry.fromSchema('urn:babel:other:x', schema)).mask(decode(text)), undefined)
})

test('a masked export line reads as masked (replay refuses it), never as an envelope or a plain wrapped line', () => {
  const masked = new Masker(SchemaRegistry.fromSchema(urn, schema)).mask(decode(text))!
  for (const headers of [undefined, {traceparent: 't'}]) {
    const line = maskedExportLine(masked.text, parseJsonTree(masked.text), masked.fields, headers)
    const read = readExportLine(line)
    assert.equal(read.kind, 'masked')
    assert.deepEqual(read.kind === 'masked' && read.fields, masked.fields)
    assert.equal(read.kind === 'masked' && read.envelope, masked.text)
  }
  // A "masked" key in any position marks the line.
  assert.equal(readExportLine(`{"masked":[],"envelope":${text}}`).kind, 'masked')
})
