/**
 * Artemis's app headers: the AMQP application properties minus bq's projection (`bq_*` and the
 * replay marker in either spelling) and what Artemis itself stamps (`_AMQ_*` internals, `JMSX*`
 * JMS-defined properties). Only string values are app headers: a number or boolean written back as
 * a string would change its AMQP type (and what a JMS selector compares), so those are left out.
 */
import type {OutgoingMessage} from '../adapter.js'
import {outgoingAppHeaders, pickAppHeaders} from '../shared/app-headers.js'

export function isArtemisReserved(name: string): boolean {
  return name.startsWith('_AMQ_') || name.startsWith('JMSX')
}

export function artemisAppHeaders(properties: Record<string, unknown>): Record<string, string> {
  return pickAppHeaders(properties, {reserved: isArtemisReserved})
}

/** The application properties to send: app headers first, then bq's own (`projected`), which win. */
export function artemisPropertiesFor(message: OutgoingMessage, projected: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const app = outgoingAppHeaders(message, isArtemisReserved)
  if (Object.keys(app).length === 0) return projected
  return {...app, ...projected}
}
