/**
 * An Artemis (AMQP 1.0) message's native properties for an export (NativeProperties), and the
 * message that puts them back on a restore: the header (durable, priority, ttl, first-acquirer),
 * the properties section, the message annotations, the application properties and the kind of
 * body section, as the broker held them, not the binding's projection of the body
 * (docs/restore-fidelity.md).
 */
import rhea from 'rhea'
import type {Message} from 'rhea'

import {REPLAY_BYPASS_HEADER, RUN_ID_HEADER} from '../../envelope/fields.js'
import type {NativeProperties, OutgoingMessage} from '../adapter.js'
import {fromNativeJson, toNativeJson} from '../shared/native-json.js'
import {BYPASS_MARKER_VALUE} from '../shared/native-values.js'
import {isArtemisReserved} from './app-headers.js'

export const ARTEMIS_KIND = 'artemis'

/** The header fields a consumer sees (delivery-count is the broker's, counted anew). */
const HEADER_FIELDS = ['priority', 'ttl', 'first_acquirer'] as const
const PROPERTY_FIELDS = [
  'message_id', 'user_id', 'to', 'subject', 'reply_to', 'correlation_id', 'content_type', 'content_encoding',
  'absolute_expiry_time', 'creation_time', 'group_id', 'group_sequence', 'reply_to_group_id',
] as const

/** How the body was sent: one data section (bytes), or an AMQP string value (text). */
export type BodySection = 'data' | 'amqp-value'

/**
 * `bodySection` is what message.ts made of the body; only a data section and a string value are
 * recorded (bq restores the bytes as one or the other). Application properties Artemis keeps for
 * itself (`_AMQ_*`: duplicate ids, scheduling; `JMSX*`) are not recorded: written back, a
 * duplicate id would have the broker drop the restored copy.
 */
export function artemisNativeProperties(message: Message, bodySection: BodySection | undefined): NativeProperties {
  const recorded: Record<string, unknown> = {durable: message.durable === true}
  for (const field of [...HEADER_FIELDS, ...PROPERTY_FIELDS]) {
    const value = message[field] as unknown
    if (value !== undefined && value !== null) recorded[field] = toNativeJson(value)
  }
  if (bodySection !== undefined) recorded.body_section = bodySection
  const annotations = plain(message.message_annotations)
  if (Object.keys(annotations).length > 0) recorded.message_annotations = toNativeJson(annotations)
  const properties = Object.entries(plain(message.application_properties)).filter(([name]) => !isArtemisReserved(name))
  if (properties.length > 0) recorded.application_properties = toNativeJson(Object.fromEntries(properties))
  return {broker: ARTEMIS_KIND, properties: recorded}
}

/** The rhea message of a restore: the recorded sections around the body bytes. */
export function artemisRestoredMessage(message: OutgoingMessage, native: NativeProperties): Message {
  const recorded = native.properties
  const amqp: Record<string, unknown> = {durable: recorded.durable === true}
  for (const field of [...HEADER_FIELDS, ...PROPERTY_FIELDS]) {
    if (recorded[field] !== undefined && recorded[field] !== null) amqp[field] = fromNativeJson(recorded[field])
  }
  const annotations = fromNativeJson(recorded.message_annotations ?? {}) as Record<string, unknown>
  if (Object.keys(annotations).length > 0) amqp.message_annotations = annotations
  const properties = {...(fromNativeJson(recorded.application_properties ?? {}) as Record<string, unknown>)}
  if (message.bypass) properties[REPLAY_BYPASS_HEADER] = BYPASS_MARKER_VALUE
  if (message.runId !== undefined) properties[RUN_ID_HEADER] = message.runId
  if (Object.keys(properties).length > 0) amqp.application_properties = properties
  amqp.body = recorded.body_section === 'amqp-value' ? message.body.toString('utf8') : rhea.message.data_section(message.body)
  return amqp as unknown as Message
}

function plain(value: unknown): Record<string, unknown> {
  if (value === null || value === undefined || typeof value !== 'object' || Array.isArray(value)) return {}
  if (value instanceof Map) return Object.fromEntries([...value.entries()].map(([key, inner]) => [String(key), inner]))
  return value as Record<string, unknown>
}
