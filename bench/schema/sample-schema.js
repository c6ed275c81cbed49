// The generated schema the schema benches use (bench.js, check.js, compare.js).
import {mkdirSync, rmSync, writeFileSync} from 'node:fs'
import path from 'node:path'

/** A schema of the size real data schemas have: nested objects, arrays, enums, a definition and $refs. */
export function sampleSchema(i, variant = 0) {
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    type: 'object',
    required: ['id', 'amount', 'status'],
    definitions: {money: {type: 'object', required: ['value', 'currency'], properties: {value: {type: 'number', minimum: 0}, currency: {enum: variant === 1 ? ['EUR', 'USD'] : ['EUR', 'USD', 'TRY']}}, additionalProperties: false}},
    properties: {
      id: {type: 'integer', minimum: 1},
      amount: {$ref: '#/definitions/money'},
      status: {type: 'string', enum: ['new', 'paid', 'shipped', 'cancelled']},
      note: {type: 'string', maxLength: 500},
      email: {type: 'string', format: 'email', 'x-gdpr-sensitive': 'email'},
      tags: {type: 'array', items: {type: 'string', minLength: 1}, maxItems: 20, uniqueItems: true},
      lines: {type: 'array', items: {type: 'object', required: ['sku', 'qty'], properties: {sku: {type: 'string', pattern: '^[A-Z0-9-]+$'}, qty: {type: 'integer', minimum: 1}, price: {$ref: '#/definitions/money'}}}},
      shipping: {type: 'object', properties: {street: {type: 'string', 'x-gdpr-sensitive': true}, city: {type: 'string'}, country: {type: 'string', minLength: 2, maxLength: 2}}},
      [`field_${i}`]: {type: ['string', 'null']},
      ...(variant === 2 ? {added: {type: 'string'}} : {}),
    },
    additionalProperties: false,
  }
}

/** Writes a registry of `count` sample schemas (schemas/event-<i>.json and registry.json) into `dir`, afresh. */
export function writeSampleRegistry(dir, count) {
  rmSync(dir, {recursive: true, force: true})
  mkdirSync(path.join(dir, 'schemas'), {recursive: true})
  const entries = []
  for (let i = 0; i < count; i++) {
    writeFileSync(path.join(dir, `schemas/event-${i}.json`), JSON.stringify(sampleSchema(i), null, 2))
    entries.push({urn: `urn:babel:bench:event-${i}`, schema: `schemas/event-${i}.json`, owner: 'bench'})
  }
  writeFileSync(path.join(dir, 'registry.json'), JSON.stringify({schemas: entries}, null, 2))
}
