/**
 * Service Bus's app headers: the application properties minus bq's projection (`bq-*`, the replay
 * marker) and what Service Bus stamps there when it dead-letters a message (`DeadLetterReason`,
 * `DeadLetterErrorDescription`). Only string values are app headers: a number, date or long
 * written back as a string would change its AMQP type, so those are left out.
 */
import type {OutgoingMessage} from '../adapter.js'
import {outgoingAppHeaders, pickAppHeaders} from '../shared/app-headers.js'

const RESERVED = new Set(['DeadLetterReason', 'DeadLetterErrorDescription'])

export function isServiceBusReserved(name: string): boolean {
  return RESERVED.has(name)
}

export function serviceBusAppHeaders(properties: Record<string, unknown> | null | undefined): Record<string, string> {
  return pickAppHeaders(properties, {reserved: isServiceBusReserved})
}

/** The application properties to send: app headers first, then bq's own (`projected`), which win. */
export function serviceBusPropertiesFor(message: OutgoingMessage, projected: Record<string, string | number> | undefined): Record<string, string | number> | undefined {
  const app = outgoingAppHeaders(message, isServiceBusReserved)
  if (Object.keys(app).length === 0) return projected
  return {...app, ...projected}
}
