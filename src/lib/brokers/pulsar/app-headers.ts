/**
 * Pulsar's app headers: the message properties (string → string already) minus bq's projection
 * (`bq-*`, the replay marker) and what Pulsar's clients stamp when they route a message to a
 * retry or dead-letter topic (PULSAR_CLIENT_PROPERTIES).
 */
import type {OutgoingMessage} from '../adapter.js'
import {outgoingAppHeaders, pickAppHeaders} from '../shared/app-headers.js'

/**
 * Every property Pulsar's Java client writes on a message it sends to a retry topic
 * (`reconsumeLater`) or a dead-letter topic: the names are the constants of its
 * `org.apache.pulsar.client.util.RetryMessageUtil`. They describe one trip through the client's
 * retry and dead-letter machinery, so a redrive strips them all (a copy that kept them would look
 * dead-lettered again, with a stale reconsume count). The one list: read.ts takes its names here.
 */
export const PULSAR_CLIENT_PROPERTIES = {
  /** SYSTEM_PROPERTY_REAL_TOPIC: the topic the message was consumed from before it was routed. */
  realTopic: 'REAL_TOPIC',
  /** SYSTEM_PROPERTY_REAL_SUBSCRIPTION (newer clients): the subscription that routed it. */
  realSubscription: 'REAL_SUBSCRIPTION',
  /** PROPERTY_ORIGIN_MESSAGE_ID: its message id on that topic. */
  originMessageId: 'ORIGIN_MESSAGE_ID',
  /**
   * SYSTEM_PROPERTY_ORIGIN_MESSAGE_ID: the name older clients wrote the origin message id under,
   * spelt this way in the client (deprecated there, still found on messages they wrote).
   */
  originMessageIdLegacy: 'ORIGIN_MESSAGE_IDY_TIME',
  /** SYSTEM_PROPERTY_RETRY_TOPIC: the retry topic it went through. */
  retryTopic: 'RETRY_TOPIC',
  /** SYSTEM_PROPERTY_RECONSUMETIMES: how many times it was handed to reconsumeLater. */
  reconsumeTimes: 'RECONSUMETIMES',
  /** SYSTEM_PROPERTY_DELAY_TIME: the delay asked of reconsumeLater, in milliseconds. */
  delayTime: 'DELAY_TIME',
} as const

const RESERVED = new Set<string>(Object.values(PULSAR_CLIENT_PROPERTIES))

export function isPulsarReserved(name: string): boolean {
  return RESERVED.has(name)
}

export function pulsarAppHeaders(properties: Record<string, string>): Record<string, string> {
  return pickAppHeaders(properties, {reserved: isPulsarReserved})
}

/** The properties to send: app headers first, then bq's own (`projected`), which win. */
export function pulsarPropertiesFor(message: OutgoingMessage, projected: Record<string, string>): Record<string, string> {
  return {...outgoingAppHeaders(message, isPulsarReserved), ...projected}
}
