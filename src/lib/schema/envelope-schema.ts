import {DEAD_LETTER_REASONS, LANGS} from '../envelope/validate.js'

/**
 * The BabelQueue wire envelope (schema_version 1, spec-envelope.md) as a draft-07 schema, with
 * `data` left to the caller: the AsyncAPI export wraps each URN's data schema in it, so a
 * message in the catalog is what travels on the broker, not only its payload.
 */
export function envelopeSchema(urn: string, data: unknown): Record<string, unknown> {
  const epochMs = {type: 'integer', minimum: 0}
  return {
    type: 'object',
    title: `BabelQueue envelope of ${urn}`,
    required: ['job', 'trace_id', 'data', 'meta', 'attempts'],
    properties: {
      job: {type: 'string', const: urn, description: 'The message URN (consumers also accept it as "urn").'},
      urn: {type: 'string', const: urn, description: 'Inbound alias of "job"; producers write "job".'},
      trace_id: {type: 'string', format: 'uuid', description: 'Correlation id, kept unchanged across every hop.'},
      data: data,
      meta: {
        type: 'object',
        required: ['id', 'queue', 'lang', 'schema_version', 'created_at'],
        properties: {
          id: {type: 'string', format: 'uuid', description: 'This message\'s own id.'},
          queue: {type: 'string', minLength: 1, description: 'The logical queue name.'},
          lang: {type: 'string', enum: [...LANGS], description: 'The producer\'s language.'},
          schema_version: {type: 'integer', const: 1},
          created_at: {...epochMs, description: 'Production time, Unix epoch milliseconds, UTC.'},
        },
      },
      attempts: {type: 'integer', minimum: 0, description: 'Delivery attempts so far, kept by the transport.'},
      dead_letter: {
        type: 'object',
        description: 'Present only on a message in a dead-letter queue.',
        required: ['reason', 'failed_at', 'original_queue', 'attempts'],
        properties: {
          reason: {type: 'string', enum: [...DEAD_LETTER_REASONS]},
          error: {type: ['string', 'null']},
          exception: {type: ['string', 'null']},
          failed_at: epochMs,
          original_queue: {type: 'string'},
          attempts: {type: 'integer', minimum: 0},
          lang: {type: 'string', enum: [...LANGS]},
        },
      },
    },
  }
}
