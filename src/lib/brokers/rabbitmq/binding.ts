/**
 * RabbitMQ (AMQP 0-9-1) binding — spec-broker-bindings.md "RabbitMQ (AMQP 0-9-1)" and the
 * manifest's `rabbitmq.property_projection`. The body is the envelope; the contract is mirrored
 * on AMQP properties plus native-typed headers (field-tables keep integers as integers).
 */
import type {Options} from 'amqplib'
import {REPLAY_BYPASS_HEADER, type EnvelopeFields, type NativeFields} from '../../envelope/fields.js'
import {BYPASS_MARKER_VALUE, atLeastBody, carried, isBypassMarker, nativeText, nonNegativeInt, type ProjectionOptions} from '../shared/native-values.js'
import type {Binding} from '../adapter.js'

export type RabbitHeaders = {
  'x-attempts': number
  'x-schema-version': number
  'x-source-lang': string
  [REPLAY_BYPASS_HEADER]?: string
}

export interface RabbitPublishOptions extends Options.Publish {
  type: string
  correlationId: string
  messageId: string
  appId: 'babelqueue'
  contentType: 'application/json'
  persistent: true
  /** AMQP timestamps are whole seconds, so `meta.created_at` loses its milliseconds here. */
  timestamp?: number
  headers: RabbitHeaders
}

/** The properties a consumer hands back (an amqplib `MessageProperties` fits). */
export interface RabbitPropertiesIn {
  type?: unknown
  correlationId?: unknown
  messageId?: unknown
  headers?: Record<string, unknown> | null
}

export function rabbitPublishOptions(fields: EnvelopeFields, opts: ProjectionOptions = {}): RabbitPublishOptions {
  const headers: RabbitHeaders = {
    'x-attempts': fields.attempts,
    'x-schema-version': fields.schemaVersion,
    'x-source-lang': fields.lang,
  }
  if (opts.bypass) headers[REPLAY_BYPASS_HEADER] = BYPASS_MARKER_VALUE
  const options: RabbitPublishOptions = {
    type: fields.job,
    correlationId: fields.traceId,
    messageId: fields.id,
    appId: 'babelqueue',
    contentType: 'application/json',
    persistent: true,
    headers,
  }
  const createdAt = nonNegativeInt(fields.createdAt)
  if (createdAt !== undefined) options.timestamp = Math.floor(createdAt / 1000)
  return options
}

/** The inverse projection. `createdAt` is not recovered: the AMQP timestamp has only second precision. */
export function rabbitNativeFields(properties: RabbitPropertiesIn): NativeFields {
  const headers = properties.headers ?? {}
  return carried<NativeFields>({
    job: nativeText(properties.type),
    traceId: nativeText(properties.correlationId),
    id: nativeText(properties.messageId),
    lang: nativeText(headers['x-source-lang']),
    schemaVersion: nonNegativeInt(headers['x-schema-version']),
    attempts: nonNegativeInt(headers['x-attempts']),
    replayBypass: isBypassMarker(headers[REPLAY_BYPASS_HEADER]) || undefined,
  })
}

/**
 * Consume-side attempts. The manifest leaves this runtime-specific: Laravel treats `x-attempts`
 * as authoritative, the App runtimes keep the count in the body and republish with attempts+1.
 * Both increment the body too, so taking max(body, header) agrees with either producer and never
 * lowers a count either side already reached. An invalid header is ignored.
 */
export function reconcileRabbitAttempts(bodyAttempts: number, headerAttempts: unknown): number {
  return atLeastBody(bodyAttempts, nonNegativeInt(headerAttempts))
}

/** The attempts rule the operations apply to what this broker returns. */
export const rabbitmqBinding: Binding = {reconcileAttempts: (body, native) => reconcileRabbitAttempts(body, native.attempts)}
