/**
 * Apache Pulsar binding — spec-broker-bindings.md "Apache Pulsar" and the manifest's
 * `pulsar.property_projection` / `pulsar.attempts_reconciliation`. Properties are string→string,
 * so every number is stringified; `publishTime` (broker-set) mirrors `meta.created_at`.
 */
import {REPLAY_BYPASS_HEADER, type EnvelopeFields, type NativeFields} from '../../envelope/fields.js'
import {BYPASS_MARKER_VALUE, atLeastBody, carried, delayMillis, isBypassMarker, nativeText, nonNegativeInt, type DelayedProjectionOptions} from '../shared/native-values.js'
import type {Binding} from '../adapter.js'

/** Properties; with `delayMs`, `bq-delay` mirrors the relative delay in milliseconds (the caller sets `deliverAfter`). */
export function pulsarProperties(fields: EnvelopeFields, opts: Omit<DelayedProjectionOptions, 'nowMs'> = {}): Record<string, string> {
  const properties: Record<string, string> = {
    'bq-job': fields.job,
    'bq-trace-id': fields.traceId,
    'bq-message-id': fields.id,
    'bq-schema-version': String(fields.schemaVersion),
    'bq-source-lang': fields.lang,
    'bq-attempts': String(fields.attempts),
  }
  if (opts.bypass) properties[REPLAY_BYPASS_HEADER] = BYPASS_MARKER_VALUE
  if (opts.delayMs !== undefined) properties['bq-delay'] = String(delayMillis(opts.delayMs))
  return properties
}

/** The inverse projection; `deliveryCount` is the native 0-based RedeliveryCount. */
export function pulsarNativeFields(properties: Record<string, string> | undefined, redeliveryCount?: number): NativeFields {
  const props: Record<string, unknown> = properties ?? {}
  return carried<NativeFields>({
    job: nativeText(props['bq-job']),
    traceId: nativeText(props['bq-trace-id']),
    id: nativeText(props['bq-message-id']),
    lang: nativeText(props['bq-source-lang']),
    schemaVersion: nonNegativeInt(props['bq-schema-version']),
    attempts: nonNegativeInt(props['bq-attempts']),
    deliveryCount: nonNegativeInt(redeliveryCount),
    replayBypass: isBypassMarker(props[REPLAY_BYPASS_HEADER]) || undefined,
  })
}

/** max(body.attempts, RedeliveryCount) — the counter is 0-based, so no −1. */
export function reconcilePulsarAttempts(bodyAttempts: number, redeliveryCount: number | null | undefined): number {
  return atLeastBody(bodyAttempts, nonNegativeInt(redeliveryCount))
}

/** The attempts rule the operations apply to what this broker returns. */
export const pulsarBinding: Binding = {reconcileAttempts: (body, native) => reconcilePulsarAttempts(body, native.deliveryCount)}
