/**
 * Apache ActiveMQ Artemis (AMQP 1.0) binding — spec-broker-bindings.md "Apache ActiveMQ Artemis"
 * and the manifest's `artemis.property_projection` / `artemis.attempts_reconciliation`. The URN,
 * trace id and message id ride the slots a JMS peer reads; the rest are string `bq_` properties.
 * Field names follow rhea's message object.
 */
import {REPLAY_BYPASS_HEADER, type EnvelopeFields, type NativeFields} from '../../envelope/fields.js'
import {BYPASS_MARKER_VALUE, atLeastBody, carried, delayMillis, epochMillis, isBypassMarker, nativeText, nonNegativeInt, type DelayedProjectionOptions} from '../shared/native-values.js'
import type {Binding} from '../adapter.js'

/**
 * The AMQP-JMS mapping of JMSType (the spec's slot). Artemis's own AMQP→JMS converter does not
 * read it: it maps the AMQP `subject` to JMSType, so bq writes the URN in both (docs/brokers.md).
 */
export const JMS_TYPE_ANNOTATION = 'x-opt-jms-type'
/** Absolute scheduled-delivery time (epoch ms) Artemis honours. */
export const DELIVERY_TIME_ANNOTATION = 'x-opt-delivery-time'
/**
 * The replay marker keeps its cross-SDK spelling `bq-replay-bypass` here too: every SDK's Artemis
 * guard reads that name (spec-redrive-and-replay.md); the underscore rule covers only the
 * binding's own `bq_*` projection properties.
 */
export const ARTEMIS_REPLAY_BYPASS_PROPERTY = REPLAY_BYPASS_HEADER
/** The spelling older bq releases wrote; still read so their replays stay replays. */
export const LEGACY_ARTEMIS_REPLAY_BYPASS_PROPERTY = 'bq_replay_bypass'

export type ArtemisApplicationProperties = {
  bq_schema_version: string
  bq_source_lang: string
  bq_attempts: string
  bq_app_id: 'babelqueue'
  [ARTEMIS_REPLAY_BYPASS_PROPERTY]?: string
  /** The relative delay in milliseconds, mirroring the delivery-time annotation. */
  bq_delay?: string
}

export interface ArtemisMessageFields {
  message_annotations: {[JMS_TYPE_ANNOTATION]: string; [DELIVERY_TIME_ANNOTATION]?: number}
  /** The URN again: what Artemis hands a JMS consumer as JMSType. */
  subject: string
  correlation_id: string
  creation_time: Date
  message_id?: string
  content_type: 'application/json'
  application_properties: ArtemisApplicationProperties
}

/** A received message (a rhea `Message` fits). */
export interface ArtemisMessageIn {
  message_annotations?: Record<string, unknown> | null
  subject?: unknown
  correlation_id?: unknown
  message_id?: unknown
  creation_time?: unknown
  application_properties?: Record<string, unknown> | null
  delivery_count?: unknown
}

/** With `delayMs`, the delivery time is `nowMs + delayMs` (`nowMs` defaults to the clock). */
export function artemisMessageFields(fields: EnvelopeFields, opts: DelayedProjectionOptions = {}): ArtemisMessageFields {
  const message: ArtemisMessageFields = {
    message_annotations: {[JMS_TYPE_ANNOTATION]: fields.job},
    subject: fields.job,
    correlation_id: fields.traceId,
    creation_time: new Date(fields.createdAt),
    message_id: fields.id,
    content_type: 'application/json',
    application_properties: {
      bq_schema_version: String(fields.schemaVersion),
      bq_source_lang: fields.lang,
      bq_attempts: String(fields.attempts),
      bq_app_id: 'babelqueue',
    },
  }
  if (opts.bypass) message.application_properties[ARTEMIS_REPLAY_BYPASS_PROPERTY] = BYPASS_MARKER_VALUE
  if (opts.delayMs !== undefined) {
    const delay = delayMillis(opts.delayMs)
    message.message_annotations[DELIVERY_TIME_ANNOTATION] = (opts.nowMs ?? Date.now()) + delay
    message.application_properties.bq_delay = String(delay)
  }
  return message
}

/** The inverse projection; `deliveryCount` is the native 0-based AMQP delivery-count. */
export function artemisNativeFields(message: ArtemisMessageIn): NativeFields {
  const props = message.application_properties ?? {}
  return carried<NativeFields>({
    // A JMS producer's JMSType arrives as the subject alone.
    job: nativeText(message.message_annotations?.[JMS_TYPE_ANNOTATION]) ?? nativeText(message.subject),
    traceId: nativeText(message.correlation_id),
    id: nativeText(message.message_id),
    lang: nativeText(props.bq_source_lang),
    schemaVersion: nonNegativeInt(props.bq_schema_version),
    createdAt: epochMillis(message.creation_time),
    attempts: nonNegativeInt(props.bq_attempts),
    deliveryCount: nonNegativeInt(message.delivery_count),
    replayBypass: isBypassMarker(props[ARTEMIS_REPLAY_BYPASS_PROPERTY] ?? props[LEGACY_ARTEMIS_REPLAY_BYPASS_PROPERTY]) || undefined,
  })
}

/** max(body.attempts, delivery-count) — the AMQP counter is 0-based, so no −1. */
export function reconcileArtemisAttempts(bodyAttempts: number, deliveryCount: number | null | undefined): number {
  return atLeastBody(bodyAttempts, nonNegativeInt(deliveryCount))
}

/** The attempts rule the operations apply to what this broker returns. */
export const artemisBinding: Binding = {reconcileAttempts: (body, native) => reconcileArtemisAttempts(body, native.deliveryCount)}
