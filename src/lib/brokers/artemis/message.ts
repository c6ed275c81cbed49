/**
 * Between bq's messages and rhea's AMQP 1.0 message objects.
 *
 * Out: the body is one AMQP `data` section holding the exact bytes (an AMQP string value would be
 * re-encoded text), durable, with the Artemis binding's projection (binding.ts); a restore writes
 * the recorded sections instead (restore.ts).
 * In: the body bytes whatever section a producer used, the metadata made JSON-friendly for
 * `bq peek --headers`, the inverse projection, and what Artemis's dead-letter address records.
 */
import rhea from 'rhea'
import type {Message} from 'rhea'

import {ARTEMIS_REPLAY_BYPASS_PROPERTY, DELIVERY_TIME_ANNOTATION, artemisMessageFields, artemisNativeFields} from './binding.js'
import {BYPASS_MARKER_VALUE, carried, delayMillis, epochMillis, nativeText, nonNegativeInt} from '../shared/native-values.js'
import type {NativeFields} from '../../envelope/fields.js'
import type {BrokerMessage, OutgoingMessage} from '../adapter.js'
import {artemisAppHeaders, artemisPropertiesFor} from './app-headers.js'
import {ARTEMIS_KIND, artemisNativeProperties, artemisRestoredMessage, type BodySection} from './restore.js'

/** AMQP body section type codes (AMQP 1.0 §3.2). */
const DATA_SECTION = 0x75
const SEQUENCE_SECTION = 0x76

/** Where Artemis records a dead-lettered or expired message's origin, as AMQP annotations (and CORE properties). */
const ORIGINAL_ADDRESS_KEYS = ['x-opt-ORIG-ADDRESS', '_AMQ_ORIG_ADDRESS']
const ORIGINAL_QUEUE_KEYS = ['x-opt-ORIG-QUEUE', '_AMQ_ORIG_QUEUE']
const ACTUAL_EXPIRY_KEYS = ['x-opt-ACTUAL-EXPIRY', '_AMQ_ACTUAL_EXPIRY']
/** Set by Artemis when the address has `enable-ingress-timestamp`. */
const INGRESS_TIME_ANNOTATION = 'x-opt-ingress-time'

/** The rhea message for one outgoing bq message. */
export function toAmqpMessage(message: OutgoingMessage, nowMs = Date.now()): Message {
  if (message.restore?.broker === ARTEMIS_KIND) return artemisRestoredMessage(message, message.restore)
  const body = rhea.message.data_section(message.body)
  if (message.fields !== null) {
    const projected = artemisMessageFields(message.fields, {bypass: message.bypass, delayMs: message.delayMs, nowMs})
    return {...projected, application_properties: artemisPropertiesFor(message, projected.application_properties), durable: true, body} as unknown as Message
  }
  // Not a decodable envelope (a poison body being moved or replayed): the bytes, durable, nothing projected.
  const amqp: Record<string, unknown> = {durable: true, body}
  if (message.bypass) amqp.application_properties = {[ARTEMIS_REPLAY_BYPASS_PROPERTY]: BYPASS_MARKER_VALUE}
  if (message.delayMs !== undefined) amqp.message_annotations = {[DELIVERY_TIME_ANNOTATION]: nowMs + delayMillis(message.delayMs)}
  const properties = artemisPropertiesFor(message, amqp.application_properties as Record<string, unknown> | undefined)
  if (properties !== undefined) amqp.application_properties = properties
  return amqp as unknown as Message
}

export type ReadVia = 'browse' | 'consume'

/**
 * A received message as bq shows it. `via` matters for the delivery count: Artemis 2.40 stamps a
 * browsed copy with one less than a consumer would receive (a browse is not counted as a
 * delivery), so a browsed count of n ≥ 1 means n + 1 failed deliveries; a browsed message with
 * exactly one failed delivery is indistinguishable from a fresh one. Measured, see test/brokers/artemis/adapter.test.ts.
 */
export function toBrokerMessage(message: Message, position: string, via: ReadVia): BrokerMessage {
  const annotations = plainMap(message.message_annotations)
  const properties = plainMap(message.application_properties)
  const native: NativeFields = {...artemisNativeFields({...message, message_annotations: annotations, application_properties: properties})}
  if (via === 'browse') {
    const browsed = nonNegativeInt(message.delivery_count)
    if (browsed !== undefined && browsed > 0) native.deliveryCount = browsed + 1
    else delete native.deliveryCount
  }
  const deadLetter = deadLetterOf(annotations, properties)
  if (deadLetter !== undefined) native.nativeDeadLetter = deadLetter
  const result: BrokerMessage = {
    body: bodyBytes(message.body),
    headers: headersOf(message, annotations, properties),
    native,
    appHeaders: artemisAppHeaders(properties),
    nativeProperties: artemisNativeProperties(message, restorableSection(message.body)),
    position,
  }
  const ingress = epochMillis(annotations[INGRESS_TIME_ANNOTATION])
  if (ingress !== undefined) result.enqueuedAt = ingress
  return result
}

/** The body bytes: data sections as stored; an AMQP string value as its UTF-8; anything else as JSON. */
export function bodyBytes(body: unknown): Buffer {
  if (isSection(body)) {
    const parts = body.multiple ? (body.content as unknown[]) : [body.content]
    if (body.typecode === DATA_SECTION) return Buffer.concat(parts.map((part) => asBuffer(part)))
    if (body.typecode === SEQUENCE_SECTION) return Buffer.from(JSON.stringify(jsonFriendly(parts)), 'utf8')
  }
  if (body === undefined || body === null) return Buffer.alloc(0)
  if (typeof body === 'string') return Buffer.from(body, 'utf8')
  if (body instanceof Uint8Array) return asBuffer(body)
  return Buffer.from(JSON.stringify(jsonFriendly(body)), 'utf8')
}

/** The body section a restore can write back around the same bytes: data, or a string value. */
function restorableSection(body: unknown): BodySection | undefined {
  if (isSection(body)) return body.typecode === DATA_SECTION ? 'data' : undefined
  return typeof body === 'string' ? 'amqp-value' : undefined
}

/** The header and properties sections (AMQP spelling), annotations and application properties. */
function headersOf(message: Message, annotations: Record<string, unknown>, properties: Record<string, unknown>): Record<string, unknown> {
  const shown: Record<string, unknown> = {}
  for (const key of HEADER_FIELDS) {
    const value = message[key]
    if (value !== undefined && value !== null) shown[key] = jsonFriendly(value)
  }
  if (Object.keys(annotations).length > 0) shown.message_annotations = jsonFriendly(annotations)
  if (Object.keys(properties).length > 0) shown.application_properties = jsonFriendly(properties)
  const deliveryAnnotations = plainMap(message.delivery_annotations)
  if (Object.keys(deliveryAnnotations).length > 0) shown.delivery_annotations = jsonFriendly(deliveryAnnotations)
  const body = message.body
  shown.body_section = isSection(body) ? (body.typecode === DATA_SECTION ? 'data' : 'amqp-sequence') : 'amqp-value'
  return shown
}

const HEADER_FIELDS = [
  'durable', 'priority', 'ttl', 'first_acquirer', 'delivery_count',
  'message_id', 'user_id', 'to', 'subject', 'reply_to', 'correlation_id', 'content_type', 'content_encoding',
  'absolute_expiry_time', 'creation_time', 'group_id', 'group_sequence', 'reply_to_group_id',
] as const

/**
 * Artemis moves a message that ran out of delivery attempts (or was rejected) to the address's
 * dead-letter address, and an expired one to its expiry address, annotating where it came from.
 * The original address is where a redrive should send it back (a bq queue is an address with one
 * queue of the same name); the queue is the fallback for messages that name only that.
 */
export function deadLetterOf(annotations: Record<string, unknown>, properties: Record<string, unknown>): NativeFields['nativeDeadLetter'] | undefined {
  const pick = (keys: string[]) => {
    for (const key of keys) {
      const value = nativeText(annotations[key]) ?? nativeText(properties[key])
      if (value !== undefined) return value
    }
    return undefined
  }
  const originalQueue = pick(ORIGINAL_ADDRESS_KEYS) ?? pick(ORIGINAL_QUEUE_KEYS)
  if (originalQueue === undefined) return undefined
  const expiredAt = epochMillis(annotations[ACTUAL_EXPIRY_KEYS[0]] ?? properties[ACTUAL_EXPIRY_KEYS[1]])
  return carried({
    // Artemis records no reason; the expiry stamp is the one thing that tells the two apart.
    reason: expiredAt === undefined ? 'delivery_failed' : 'expired',
    originalQueue,
    failedAt: expiredAt,
  })
}

/** A decoded AMQP map as a plain object (rhea gives objects; be defensive about anything else). */
function plainMap(value: unknown): Record<string, unknown> {
  if (value === null || value === undefined || typeof value !== 'object' || Array.isArray(value)) return {}
  if (value instanceof Map) return Object.fromEntries([...value.entries()].map(([key, inner]) => [String(key), inner]))
  return value as Record<string, unknown>
}

interface Section {
  typecode: number
  content: unknown
  multiple?: boolean
}

/** rhea wraps data and amqp-sequence bodies in a section object; an amqp-value body is the value itself. */
function isSection(body: unknown): body is Section {
  if (body === null || typeof body !== 'object') return false
  const section = body as Partial<Section>
  return (section.typecode === DATA_SECTION || section.typecode === SEQUENCE_SECTION) && 'content' in section
}

function asBuffer(value: unknown): Buffer {
  if (Buffer.isBuffer(value)) return value
  if (value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength)
  if (typeof value === 'string') return Buffer.from(value, 'utf8')
  return Buffer.alloc(0)
}

/** A decoded AMQP value made JSON-friendly: bytes as UTF-8, dates as ISO text, big numbers as text. */
export function jsonFriendly(value: unknown): unknown {
  if (value === null || value === undefined) return null
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return asBuffer(value).toString('utf8')
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString()
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value)
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value.toISOString()
  if (Array.isArray(value)) return value.map(jsonFriendly)
  if (value instanceof Map) return jsonFriendly(plainMap(value))
  if (typeof value === 'object') {
    // A rhea Typed value (an AMQP type rhea kept as such): show what it carries.
    const typed = value as {type?: unknown; value?: unknown}
    if (typed.type !== undefined && 'value' in typed && Object.keys(typed).length <= 4) return jsonFriendly(typed.value)
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, inner]) => [key, jsonFriendly(inner)]))
  }
  return value
}
