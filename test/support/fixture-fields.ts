/**
 * EnvelopeFields from a conformance fixture, read with JSON.parse. A stand-in until the codec
 * lands; it accepts `urn` as the inbound alias of `job` and fails loudly on a malformed fixture.
 */
import {readFileSync} from 'node:fs'
import type {EnvelopeFields} from '../../src/lib/envelope/fields.js'

function field<T>(value: unknown, type: 'string' | 'number', where: string, file: string): T {
  if (typeof value !== type) throw new Error(`${file}: ${where} must be a ${type}, got ${JSON.stringify(value)}`)
  return value as T
}

export function fieldsFromFixture(path: string): EnvelopeFields {
  const raw: unknown = JSON.parse(readFileSync(path, 'utf8'))
  if (typeof raw !== 'object' || raw === null) throw new Error(`${path}: not a JSON object`)
  const envelope = raw as Record<string, unknown>
  const meta = (envelope.meta ?? {}) as Record<string, unknown>
  return {
    job: field<string>(envelope.job ?? envelope.urn, 'string', 'job (or urn)', path),
    traceId: field<string>(envelope.trace_id, 'string', 'trace_id', path),
    id: field<string>(meta.id, 'string', 'meta.id', path),
    queue: field<string>(meta.queue, 'string', 'meta.queue', path),
    lang: field<string>(meta.lang, 'string', 'meta.lang', path),
    schemaVersion: field<number>(meta.schema_version, 'number', 'meta.schema_version', path),
    createdAt: field<number>(meta.created_at, 'number', 'meta.created_at', path),
    attempts: field<number>(envelope.attempts, 'number', 'attempts', path),
  }
}
