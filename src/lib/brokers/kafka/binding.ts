/**
 * Apache Kafka binding — spec-broker-bindings.md "Apache Kafka" and the manifest's
 * `kafka.property_projection` / `kafka.attempts_reconciliation`. The record value is the envelope;
 * the contract rides `bq-` headers (UTF-8 bytes, integers stringified) and the record timestamp.
 * Kafka has no delivery counter, so `bq-attempts` is the authoritative count.
 */
import {REPLAY_BYPASS_HEADER, type EnvelopeFields, type NativeFields} from '../../envelope/fields.js'
import {BYPASS_MARKER_VALUE, carried, isBypassMarker, nativeText, nonNegativeInt, type ProjectionOptions} from '../shared/native-values.js'
import type {Binding} from '../adapter.js'

/** Record headers as a consumer decodes them (the kafkajs `IHeaders` shape). */
export type KafkaHeadersIn = Record<string, Buffer | string | undefined | (Buffer | string)[]>

export function kafkaHeaders(fields: EnvelopeFields, opts: ProjectionOptions = {}): Record<string, string> {
  const headers: Record<string, string> = {
    'bq-job': fields.job,
    'bq-trace-id': fields.traceId,
    'bq-message-id': fields.id,
    'bq-schema-version': String(fields.schemaVersion),
    'bq-source-lang': fields.lang,
    'bq-attempts': String(fields.attempts),
  }
  if (opts.bypass) headers[REPLAY_BYPASS_HEADER] = BYPASS_MARKER_VALUE
  return headers
}

/** The record timestamp: `meta.created_at` in Unix ms, as the string kafkajs expects. */
export function kafkaTimestamp(fields: EnvelopeFields): string {
  return String(fields.createdAt)
}

/** A repeated header key arrives as an array; the last value wins, as with Kafka's own `lastHeader`. */
function lastValue(value: KafkaHeadersIn[string]): Buffer | string | undefined {
  return Array.isArray(value) ? value[value.length - 1] : value
}

/** The inverse projection. `createdAt` is the record timestamp, which lives outside the headers. */
export function kafkaNativeFields(headers: KafkaHeadersIn | undefined): NativeFields {
  const header = (name: string) => lastValue(headers?.[name])
  return carried<NativeFields>({
    job: nativeText(header('bq-job')),
    traceId: nativeText(header('bq-trace-id')),
    id: nativeText(header('bq-message-id')),
    lang: nativeText(header('bq-source-lang')),
    schemaVersion: nonNegativeInt(header('bq-schema-version')),
    attempts: nonNegativeInt(header('bq-attempts')),
    replayBypass: isBypassMarker(header(REPLAY_BYPASS_HEADER)) || undefined,
  })
}

/**
 * The `bq-attempts` header when present and a valid non-negative integer — authoritative, even
 * below the body (NOT a max) — else the body's own count (a producer that is not BabelQueue).
 */
export function reconcileKafkaAttempts(bodyAttempts: number, headerAttempts: string | Buffer | number | null | undefined): number {
  return nonNegativeInt(headerAttempts) ?? bodyAttempts
}

/** The attempts rule the operations apply to what this broker returns. */
export const kafkaBinding: Binding = {reconcileAttempts: (body, native) => reconcileKafkaAttempts(body, native.attempts)}
