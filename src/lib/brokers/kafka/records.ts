/**
 * Kafka records ↔ bq messages: the §6 projection on the way out (value = body, `bq-` headers,
 * timestamp = meta.created_at) and the display + inverse projection on the way in.
 */
import {BYPASS_MARKER_VALUE} from '../shared/native-values.js'
import {outgoingAppHeaders, pickAppHeaders} from '../shared/app-headers.js'
import {kafkaHeaders, kafkaNativeFields, kafkaTimestamp} from './binding.js'
import {REPLAY_BYPASS_HEADER} from '../../envelope/fields.js'
import type {BrokerMessage, BrowsePrefilter, OutgoingMessage} from '../adapter.js'
import type {KafkaMessage, KafkaRecord} from './client/index.js'
import {KAFKA_KIND, kafkaNativeProperties, kafkaRestoredRecord} from './restore.js'

/** The record bq produces for a message. A body that is not an envelope gets no `bq-` headers. */
export function toKafkaMessage(message: OutgoingMessage): KafkaMessage {
  if (message.restore?.broker === KAFKA_KIND) return kafkaRestoredRecord(message, message.restore)
  // App headers first, so bq's projection (written after) wins on any clash.
  const app = outgoingAppHeaders(message)
  if (message.fields === null) {
    const headers = {...app, ...(message.bypass ? {[REPLAY_BYPASS_HEADER]: BYPASS_MARKER_VALUE} : {})}
    return {value: message.body, ...(Object.keys(headers).length > 0 ? {headers} : {})}
  }
  return {value: message.body, headers: {...app, ...kafkaHeaders(message.fields, {bypass: message.bypass})}, timestamp: kafkaTimestamp(message.fields)}
}

/** A record exactly as it was (key, value, every header, timestamp), for putting it back on its partition. */
export function copyOfRecord(record: KafkaRecord, partition: number): KafkaMessage {
  return {partition, key: record.key, value: record.value, headers: record.headers, timestamp: String(record.timestamp)}
}

/** `partition:offset`, the position bq shows for a record. */
export function positionOf(partition: number, offset: number): string {
  return `${partition}:${offset}`
}

/** A record as `bq peek` shows it: headers as strings, plus where it sits and its timestamp. */
export function toBrokerMessage(topic: string, partition: number, record: KafkaRecord): BrokerMessage {
  const headers: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries(record.headers)) {
    if (value === undefined) continue
    headers[name] = Array.isArray(value) ? value.map(text) : text(value)
  }
  const native = kafkaNativeFields(record.headers)
  if (Number.isSafeInteger(record.timestamp) && record.timestamp >= 0) native.createdAt = record.timestamp
  return {
    body: record.value,
    headers: {topic, partition, offset: record.offset, timestamp: record.timestamp, key: record.key === null ? null : record.key.toString('utf8'), headers},
    native,
    appHeaders: kafkaAppHeaders(record.headers),
    nativeProperties: kafkaNativeProperties(record),
    enqueuedAt: record.timestamp,
    position: positionOf(partition, record.offset),
  }
}

/** What a browse returns for a record that fails the caller's prefilter (BrowseOptions.prefilter): it is only counted. */
export const FILTERED_OUT: BrokerMessage = Object.freeze({body: Buffer.alloc(0), headers: Object.freeze({}), native: Object.freeze({})})

/**
 * Whether the record's value, or any of its header values, passes the caller's prefilter. The
 * verdict on a whole fetch answer (`bodiesWithin`) is kept for the records that follow from it.
 */
const recordPrefilters = new WeakMap<BrowsePrefilter, RecordPrefilter>()

export class RecordPrefilter {
  private fetched: Buffer | undefined
  private anyBodyWithin = true

  private constructor(private readonly prefilter: BrowsePrefilter) {}

  /** One per caller's prefilter: a scan's browse calls (a page each) share the verdict on a fetch answer. */
  static of(prefilter: BrowsePrefilter): RecordPrefilter {
    let known = recordPrefilters.get(prefilter)
    if (known === undefined) recordPrefilters.set(prefilter, (known = new RecordPrefilter(prefilter)))
    return known
  }

  passes(record: KafkaRecord): boolean {
    const {prefilter} = this
    if (record.fetched !== undefined && prefilter.bodiesWithin !== undefined && record.fetched !== this.fetched) {
      this.fetched = record.fetched
      this.anyBodyWithin = prefilter.bodiesWithin(record.fetched)
    }
    const bodyMayPass = record.fetched === undefined || prefilter.bodiesWithin === undefined || this.anyBodyWithin
    return (bodyMayPass && prefilter.body(record.value)) || passesOnHeaders(record, prefilter)
  }
}

/** Whether the record's value, or any of its header values, passes the caller's prefilter. */
export function passesPrefilter(record: KafkaRecord, prefilter: BrowsePrefilter): boolean {
  return prefilter.body(record.value) || passesOnHeaders(record, prefilter)
}

function passesOnHeaders(record: KafkaRecord, prefilter: BrowsePrefilter): boolean {
  for (const name in record.headers) {
    const value = record.headers[name]
    for (const one of Array.isArray(value) ? value : [value]) {
      if (one !== undefined && one !== null && prefilter.headerValue(typeof one === 'string' ? Buffer.from(one, 'utf8') : one)) return true
    }
  }
  return false
}

function text(value: Buffer | string): string {
  return typeof value === 'string' ? value : value.toString('utf8')
}

/**
 * Record headers that are not bq's, as text: a value that is not valid UTF-8, and a name repeated
 * in one record (a string → string map cannot hold both values), are left out.
 */
function kafkaAppHeaders(headers: KafkaRecord['headers']): Record<string, string> {
  const single = Object.fromEntries(Object.entries(headers).filter(([, value]) => !Array.isArray(value)))
  return pickAppHeaders(single, {rule: 'utf8-bytes'})
}
