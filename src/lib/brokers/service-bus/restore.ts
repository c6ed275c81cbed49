/**
 * A Service Bus message's native properties for an export (NativeProperties), and the message
 * that puts them back on a restore: the broker properties a sender sets and the application
 * properties with their values, as the broker held them, not the binding's projection of the body
 * (docs/restore-fidelity.md). The MessageId comes back varied per run (`<id>~<run>`), as every
 * republished copy's does (message.ts messageIdFor): on an entity with duplicate detection the
 * recorded id would have the restored copy silently dropped.
 */
import type {ServiceBusMessage, ServiceBusReceivedMessage} from '@azure/service-bus'

import {REPLAY_BYPASS_HEADER, RUN_ID_HEADER} from '../../envelope/fields.js'
import type {NativeProperties, OutgoingMessage} from '../adapter.js'
import {fromNativeJson, toNativeJson} from '../shared/native-json.js'
import {BYPASS_MARKER_VALUE} from '../shared/native-values.js'
import {isServiceBusReserved} from './app-headers.js'

export const SERVICE_BUS_KIND = 'service-bus'

/** What a sender sets and a receiver sees (the SDK's names). */
const SENDER_PROPERTIES = ['messageId', 'subject', 'correlationId', 'contentType', 'sessionId', 'partitionKey', 'to', 'replyTo', 'replyToSessionId', 'timeToLive'] as const

export function serviceBusNativeProperties(message: ServiceBusReceivedMessage): NativeProperties {
  const recorded: Record<string, unknown> = {}
  for (const name of SENDER_PROPERTIES) {
    const value = message[name] as unknown
    if (value !== undefined && value !== null) recorded[name] = toNativeJson(value)
  }
  const properties = Object.entries(message.applicationProperties ?? {}).filter(([name]) => !isServiceBusReserved(name))
  if (properties.length > 0) recorded.applicationProperties = toNativeJson(Object.fromEntries(properties))
  return {broker: SERVICE_BUS_KIND, properties: recorded}
}

/** `messageId` is the copy's (the caller varies the recorded one per run). */
export function serviceBusRestoredMessage(message: OutgoingMessage, native: NativeProperties, messageId: (recorded: string | undefined) => string): ServiceBusMessage {
  const recorded = native.properties
  const out: ServiceBusMessage = {body: message.body}
  for (const name of SENDER_PROPERTIES) {
    if (name === 'messageId' || recorded[name] === undefined || recorded[name] === null) continue
    ;(out as unknown as Record<string, unknown>)[name] = fromNativeJson(recorded[name])
  }
  out.messageId = messageId(typeof recorded.messageId === 'string' ? recorded.messageId : undefined)
  const properties = {...(fromNativeJson(recorded.applicationProperties ?? {}) as Record<string, unknown>)}
  if (message.bypass) properties[REPLAY_BYPASS_HEADER] = BYPASS_MARKER_VALUE
  if (message.runId !== undefined) properties[RUN_ID_HEADER] = message.runId
  if (Object.keys(properties).length > 0) out.applicationProperties = properties as ServiceBusMessage['applicationProperties']
  return out
}
