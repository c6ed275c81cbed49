/**
 * RabbitMQ's app headers: the AMQP headers table minus bq's projection (`x-attempts`,
 * `x-schema-version`, `x-source-lang`, besides any `bq-` name) and what the broker or its
 * plugins stamp (dead-lettering records, quorum delivery counts, timestamps, shovel and delay
 * bookkeeping). Only longstr (string) values are app headers: a number, a boolean, a table or a
 * byte array written back as a string would change its AMQP type, so those are left out.
 */
import type {OutgoingMessage} from '../adapter.js'
import {outgoingAppHeaders, pickAppHeaders} from '../shared/app-headers.js'

const RESERVED = new Set(['x-attempts', 'x-schema-version', 'x-source-lang', 'x-death', 'x-delivery-count', 'timestamp_in_ms', 'x-received-from', 'x-delay', 'CC', 'BCC'])

export function isRabbitReserved(name: string): boolean {
  return RESERVED.has(name) || /^x-(first|last)-death-/.test(name)
}

export function rabbitAppHeaders(headers: Record<string, unknown> | null | undefined): Record<string, string> {
  return pickAppHeaders(headers, {reserved: isRabbitReserved})
}

/** The headers to publish: app headers first, then bq's own (`projected`), which win. */
export function rabbitHeadersFor(message: OutgoingMessage, projected: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  const app = outgoingAppHeaders(message, isRabbitReserved)
  if (Object.keys(app).length === 0) return projected
  return {...app, ...projected}
}
