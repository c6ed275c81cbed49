/**
 * Service Bus messages ↔ bq's broker messages. Bodies travel as bytes in an AMQP data section
 * (a Buffer: the SDK would JSON-encode a string) and are read with the SDK's JSON parsing off.
 */
import {randomUUID} from 'node:crypto'

import type {ServiceBusMessage, ServiceBusReceivedMessage} from '@azure/service-bus'

import {serviceBusMessageFields, serviceBusNativeFields} from './binding.js'
import {BYPASS_MARKER_VALUE} from '../shared/native-values.js'
import {REPLAY_BYPASS_HEADER} from '../../envelope/fields.js'
import type {BrokerMessage, OutgoingMessage} from '../adapter.js'
import {ownerOf, type ServiceBusEntity} from './entity.js'
import {serviceBusAppHeaders, serviceBusPropertiesFor} from './app-headers.js'
import {SERVICE_BUS_KIND, serviceBusNativeProperties, serviceBusRestoredMessage} from './restore.js'

/** Service Bus caps MessageId at 128 characters. */
const MAX_MESSAGE_ID = 128

/**
 * The MessageId of a copy. A first publish carries MessageId = meta.id (the binding). A redrive or
 * replay republishes a meta.id that was sent before: on an entity with duplicate detection, Service
 * Bus would accept the copy and silently drop it, and the redrive would then remove the original,
 * losing the message. So a republished copy gets `<meta.id>~<run>`: unique per bq run (a retried
 * send within the run is still deduplicated), while meta.id stays in the body, which is authoritative.
 */
export function messageIdFor(message: OutgoingMessage, runId: string): string {
  const id = message.fields?.id
  if (id === undefined) return randomUUID()
  if (!message.republish) return id
  return variedId(id, runId)
}

function variedId(id: string, runId: string): string {
  const varied = `${id}~${runId}`
  return varied.length <= MAX_MESSAGE_ID ? varied : `${randomUUID()}~${runId}`
}

export function toServiceBusMessage(message: OutgoingMessage, runId: string): ServiceBusMessage {
  if (message.restore?.broker === SERVICE_BUS_KIND) {
    return serviceBusRestoredMessage(message, message.restore, (recorded) => (recorded === undefined ? randomUUID() : variedId(recorded, runId)))
  }
  const body = message.body
  if (message.fields === null) {
    // Not a decodable envelope (a poison body being moved): the bytes, nothing projected.
    const out: ServiceBusMessage = {body, messageId: messageIdFor(message, runId)}
    const properties = serviceBusPropertiesFor(message, message.bypass ? {[REPLAY_BYPASS_HEADER]: BYPASS_MARKER_VALUE} : undefined)
    if (properties !== undefined) out.applicationProperties = properties
    return out
  }
  const fields = serviceBusMessageFields(message.fields, {bypass: message.bypass})
  return {
    body,
    subject: fields.subject,
    correlationId: fields.correlationId,
    messageId: messageIdFor(message, runId),
    contentType: fields.contentType,
    applicationProperties: {...serviceBusPropertiesFor(message, fields.applicationProperties)},
  }
}

/** Bytes of a received body: a data section is a Buffer already; other AMQP body kinds are rendered as text. */
export function bodyBytes(body: unknown): Buffer {
  if (Buffer.isBuffer(body)) return body
  if (body instanceof Uint8Array) return Buffer.from(body.buffer, body.byteOffset, body.byteLength)
  if (Array.isArray(body) && body.every((part) => Buffer.isBuffer(part))) return Buffer.concat(body as Buffer[])
  if (typeof body === 'string') return Buffer.from(body, 'utf8')
  if (body === undefined || body === null) return Buffer.alloc(0)
  return Buffer.from(JSON.stringify(body, jsonFriendlyReplacer), 'utf8')
}

function jsonFriendlyReplacer(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString()
  return value
}

/** A value that survives JSON output: Longs, bigints and Dates as text, bytes as base64. */
function jsonFriendly(value: unknown): unknown {
  if (value === undefined || value === null) return value
  if (typeof value === 'bigint') return value.toString()
  if (value instanceof Date) return value.toISOString()
  if (Buffer.isBuffer(value)) return value.toString('base64')
  if (typeof value === 'object' && typeof (value as {toString?: unknown}).toString === 'function' && 'low' in (value as object) && 'high' in (value as object)) return String(value)
  if (Array.isArray(value)) return value.map(jsonFriendly)
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, jsonFriendly(v)]))
  return value
}

const BROKER_PROPERTIES = [
  'messageId', 'subject', 'correlationId', 'contentType', 'sessionId', 'partitionKey', 'to', 'replyTo', 'replyToSessionId', 'timeToLive',
  'sequenceNumber', 'enqueuedTimeUtc', 'deliveryCount', 'state', 'scheduledEnqueueTimeUtc', 'lockedUntilUtc', 'expiresAtUtc',
  'deadLetterReason', 'deadLetterErrorDescription', 'deadLetterSource',
] as const

/**
 * The delivery count as the binding means it (1-based: a first delivery reads 1). The JavaScript
 * SDK exposes the AMQP header's count of *earlier* deliveries, one less than .NET's DeliveryCount
 * for a received message; a peeked message carries the same count of earlier deliveries, so the
 * count a receive would now report is that plus one in both cases.
 */
export function oneBasedDeliveryCount(message: ServiceBusReceivedMessage): number | undefined {
  const raw = message.deliveryCount
  return typeof raw === 'number' && Number.isSafeInteger(raw) && raw >= 0 ? raw + 1 : undefined
}

export function toBrokerMessage(message: ServiceBusReceivedMessage, entity: ServiceBusEntity): BrokerMessage {
  const headers: Record<string, unknown> = {}
  for (const name of BROKER_PROPERTIES) {
    const value = (message as unknown as Record<string, unknown>)[name]
    if (value !== undefined && value !== null) headers[name] = jsonFriendly(value)
  }
  if (message.applicationProperties) headers.applicationProperties = jsonFriendly(message.applicationProperties)
  const native = serviceBusNativeFields({
    subject: message.subject,
    correlationId: message.correlationId,
    messageId: message.messageId,
    applicationProperties: message.applicationProperties ?? null,
    deliveryCount: oneBasedDeliveryCount(message),
  })
  if (entity.subQueue !== undefined) {
    // Service Bus dead-lettered it: no dead_letter block in the body, the reason is in properties.
    const reason = textOf(message.deadLetterReason)
    const error = textOf(message.deadLetterErrorDescription)
    // A subscription's messages came through its topic; sending back to the topic would reach every
    // subscription, so only a queue's dead-letter sub-queue names an original queue.
    const originalQueue = textOf(message.deadLetterSource) ?? (entity.subscription === undefined ? ownerOf(entity) : undefined)
    native.nativeDeadLetter = Object.fromEntries(Object.entries({reason, error, originalQueue}).filter(([, v]) => v !== undefined))
  }
  const enqueued = message.enqueuedTimeUtc?.getTime()
  return {
    body: bodyBytes(message.body),
    headers,
    native,
    appHeaders: serviceBusAppHeaders(message.applicationProperties),
    nativeProperties: serviceBusNativeProperties(message),
    enqueuedAt: Number.isFinite(enqueued) ? enqueued : undefined,
    position: message.sequenceNumber?.toString(),
  }
}

function textOf(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined
}
