/**
 * A Pulsar message's native properties for an export (NativeProperties), and the producer frame
 * that puts them back on a restore: every property as the topic held it (the client's dead-letter
 * bookkeeping and bq's own names included, so a restored native dead letter still reads as one),
 * the key and the event time, not the binding's projection of the body (docs/restore-fidelity.md).
 */
import {REPLAY_BYPASS_HEADER, RUN_ID_HEADER} from '../../envelope/fields.js'
import type {NativeProperties, OutgoingMessage} from '../adapter.js'
import {BYPASS_MARKER_VALUE} from '../shared/native-values.js'
import type {WsMessage} from './websocket.js'

export const PULSAR_KIND = 'pulsar'

export function pulsarNativeProperties(message: WsMessage): NativeProperties {
  const recorded: Record<string, unknown> = {properties: {...message.properties}}
  if (message.key !== undefined) recorded.key = message.key
  // The WebSocket API writes and reads the event time as ISO-8601 text.
  if (message.eventTime !== undefined) recorded.eventTime = message.eventTime
  return {broker: PULSAR_KIND, properties: recorded}
}

/** The WebSocket producer frame of a restore. */
export function pulsarRestoredFrame(message: OutgoingMessage, native: NativeProperties): Record<string, unknown> {
  const recorded = native.properties
  const properties: Record<string, string> = {}
  for (const [name, value] of Object.entries((recorded.properties ?? {}) as Record<string, unknown>)) if (typeof value === 'string') properties[name] = value
  if (message.bypass) properties[REPLAY_BYPASS_HEADER] = BYPASS_MARKER_VALUE
  if (message.runId !== undefined) properties[RUN_ID_HEADER] = message.runId
  const frame: Record<string, unknown> = {payload: message.body.toString('base64'), properties}
  if (typeof recorded.key === 'string') frame.key = recorded.key
  if (typeof recorded.eventTime === 'string') frame.eventTime = recorded.eventTime
  return frame
}
