// The generated schema both schema benches use (bench.js, check.js).

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
