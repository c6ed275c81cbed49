/**
 * Pulsar's app headers: the message properties (string → string already) minus bq's projection
 * (`bq-*`, the replay marker) and what Pulsar's clients stamp when they route a message to a
 * retry or dead-letter topic (the original topic and message id, the reconsume count and delay).
 */
import type {OutgoingMessage} from '../adapter.js'
import {outgoingAppHeaders, pickAppHeaders} from '../shared/app-headers.js'

const RESERVED = new Set(['REAL_TOPIC', 'ORIGIN_MESSAGE_ID', 'RECONSUMETIMES', 'DELAY_TIME'])

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
