/**
 * Amazon SQS binding — spec-broker-bindings.md "Amazon SQS" and the manifest's
 * `sqs.attribute_projection` / `sqs.attempts_reconciliation`. The body is the envelope; a routable
 * copy rides `MessageAttributes` (ids and strings as String, counters as Number).
 */
import {REPLAY_BYPASS_HEADER, type EnvelopeFields, type NativeFields} from '../../envelope/fields.js'
import {BYPASS_MARKER_VALUE, atLeastBody, carried, isBypassMarker, nativeText, nonNegativeInt, zeroBased, type ProjectionOptions} from '../shared/native-values.js'
import type {Binding} from '../adapter.js'

export interface SqsMessageAttribute {
  DataType: 'String' | 'Number'
  StringValue: string
}

/** An attribute as a receive returns it (an AWS SDK `MessageAttributeValue` fits). */
export interface SqsAttributeIn {
  DataType?: unknown
  StringValue?: unknown
}

const text = (value: string): SqsMessageAttribute => ({DataType: 'String', StringValue: value})
const number = (value: number): SqsMessageAttribute => ({DataType: 'Number', StringValue: String(value)})

export function sqsMessageAttributes(fields: EnvelopeFields, opts: ProjectionOptions = {}): Record<string, SqsMessageAttribute> {
  const attributes: Record<string, SqsMessageAttribute> = {
    'bq-job': text(fields.job),
    'bq-trace-id': text(fields.traceId),
    'bq-message-id': text(fields.id),
    'bq-schema-version': number(fields.schemaVersion),
    'bq-source-lang': text(fields.lang),
    'bq-created-at': number(fields.createdAt),
  }
  if (opts.bypass) attributes[REPLAY_BYPASS_HEADER] = text(BYPASS_MARKER_VALUE)
  return attributes
}

/**
 * The inverse projection. SQS carries no attempts attribute; `deliveryCount` is the native
 * 1-based `ApproximateReceiveCount` as received.
 */
export function sqsNativeFields(
  attributes: Record<string, SqsAttributeIn | undefined> | undefined,
  approximateReceiveCount?: string | null,
): NativeFields {
  const value = (name: string): unknown => attributes?.[name]?.StringValue
  return carried<NativeFields>({
    job: nativeText(value('bq-job')),
    traceId: nativeText(value('bq-trace-id')),
    id: nativeText(value('bq-message-id')),
    lang: nativeText(value('bq-source-lang')),
    schemaVersion: nonNegativeInt(value('bq-schema-version')),
    createdAt: nonNegativeInt(value('bq-created-at')),
    deliveryCount: nonNegativeInt(approximateReceiveCount),
    replayBypass: isBypassMarker(value(REPLAY_BYPASS_HEADER)) || undefined,
  })
}

/** max(body.attempts, ApproximateReceiveCount − 1); an absent or non-numeric count is ignored. */
export function reconcileSqsAttempts(bodyAttempts: number, approximateReceiveCount: string | number | null | undefined): number {
  return atLeastBody(bodyAttempts, zeroBased(approximateReceiveCount))
}

/** The attempts rule the operations apply to what this broker returns. */
export const sqsBinding: Binding = {reconcileAttempts: (body, native) => reconcileSqsAttempts(body, native.deliveryCount)}
