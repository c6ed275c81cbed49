/**
 * A Kafka record's native properties for an export (NativeProperties), and the record that puts
 * them back on a restore: the key, every header as bytes (repeated names and values that are not
 * UTF-8 too) and the timestamp, as the topic held them, not the binding's projection of the body
 * (docs/restore-fidelity.md). The produce path may still stamp the current time where the topic's
 * retention would delete a record this old at once (timestamps.ts), as for every record bq writes.
 */
import {REPLAY_BYPASS_HEADER, RUN_ID_HEADER} from '../../envelope/fields.js'
import type {NativeProperties, OutgoingMessage} from '../adapter.js'
import {fromNativeJson, toNativeJson} from '../shared/native-json.js'
import {BYPASS_MARKER_VALUE} from '../shared/native-values.js'
import type {KafkaHeaders, KafkaMessage, KafkaRecord} from './client/index.js'

export const KAFKA_KIND = 'kafka'

export function kafkaNativeProperties(record: KafkaRecord): NativeProperties {
  const headers: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(record.headers)) {
    if (value === undefined) continue
    headers[name] = toNativeJson(Array.isArray(value) ? value.map(asBytes) : asBytes(value))
  }
  const recorded: Record<string, unknown> = {key: record.key === null ? null : toNativeJson(record.key), headers}
  if (Number.isSafeInteger(record.timestamp) && record.timestamp >= 0) recorded.timestamp = record.timestamp
  return {broker: KAFKA_KIND, properties: recorded}
}

export function kafkaRestoredRecord(message: OutgoingMessage, native: NativeProperties): KafkaMessage {
  const recorded = native.properties
  const headers = {...(fromNativeJson(recorded.headers ?? {}) as KafkaHeaders)}
  if (message.bypass) headers[REPLAY_BYPASS_HEADER] = BYPASS_MARKER_VALUE
  if (message.runId !== undefined) headers[RUN_ID_HEADER] = message.runId
  const record: KafkaMessage = {key: recorded.key === null || recorded.key === undefined ? null : (fromNativeJson(recorded.key) as Buffer), value: message.body, headers}
  if (typeof recorded.timestamp === 'number') record.timestamp = String(recorded.timestamp)
  return record
}

function asBytes(value: Buffer | string): Buffer {
  return typeof value === 'string' ? Buffer.from(value, 'utf8') : value
}
