/**
 * Azure Service Bus binding — spec-broker-bindings.md "Azure Service Bus" and the manifest's
 * `asb.property_projection` / `asb.attempts_reconciliation`. Field names follow the Node client's
 * `ServiceBusMessage`; application properties are native AMQP-typed (numbers stay numbers).
 */
import {REPLAY_BYPASS_HEADER, type EnvelopeFields, type NativeFields} from '../../envelope/fields.js'
import {BYPASS_MARKER_VALUE, atLeastBody, carried, epochMillis, isBypassMarker, nativeText, nonNegativeInt, zeroBased, type ProjectionOptions} from '../shared/native-values.js'
import type {Binding} from '../adapter.js'

export type ServiceBusApplicationProperties = {
  'bq-schema-version': number
  'bq-source-lang': string
  'bq-created-at': number
  [REPLAY_BYPASS_HEADER]?: string
}

export interface ServiceBusMessageFields {
  subject: string
  correlationId: string
  messageId: string
  contentType: 'application/json'
  applicationProperties: ServiceBusApplicationProperties
}

/** A received message (a `ServiceBusReceivedMessage` fits). */
export interface ServiceBusMessageIn {
  subject?: unknown
  correlationId?: unknown
  messageId?: unknown
  applicationProperties?: Record<string, unknown> | null
  deliveryCount?: unknown
}

export function serviceBusMessageFields(fields: EnvelopeFields, opts: ProjectionOptions = {}): ServiceBusMessageFields {
  const applicationProperties: ServiceBusApplicationProperties = {
    'bq-schema-version': fields.schemaVersion,
    'bq-source-lang': fields.lang,
    'bq-created-at': fields.createdAt,
  }
  if (opts.bypass) applicationProperties[REPLAY_BYPASS_HEADER] = BYPASS_MARKER_VALUE
  return {
    subject: fields.job,
    correlationId: fields.traceId,
    messageId: fields.id,
    contentType: 'application/json',
    applicationProperties,
  }
}

/** The inverse projection. No attempts property; `deliveryCount` is the native 1-based DeliveryCount. */
export function serviceBusNativeFields(msg: ServiceBusMessageIn): NativeFields {
  const props = msg.applicationProperties ?? {}
  return carried<NativeFields>({
    job: nativeText(msg.subject),
    traceId: nativeText(msg.correlationId),
    id: nativeText(msg.messageId),
    lang: nativeText(props['bq-source-lang']),
    schemaVersion: nonNegativeInt(props['bq-schema-version']),
    createdAt: epochMillis(props['bq-created-at']),
    deliveryCount: nonNegativeInt(msg.deliveryCount),
    replayBypass: isBypassMarker(props[REPLAY_BYPASS_HEADER]) || undefined,
  })
}

/** max(body.attempts, DeliveryCount − 1); DeliveryCount ≤ 1 or invalid leaves the body count. */
export function reconcileServiceBusAttempts(bodyAttempts: number, deliveryCount: number | null | undefined): number {
  return atLeastBody(bodyAttempts, zeroBased(deliveryCount))
}

/** The attempts rule the operations apply to what this broker returns. */
export const serviceBusBinding: Binding = {reconcileAttempts: (body, native) => reconcileServiceBusAttempts(body, native.deliveryCount)}
