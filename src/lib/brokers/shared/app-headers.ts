/**
 * A message's application headers (`BrokerMessage.appHeaders`, `OutgoingMessage.appHeaders`):
 * what travels with it on a redrive or an export besides bq's own projection. Every binding
 * spells bq's names with a `bq-` or `bq_` prefix (the replay marker included, in either
 * spelling), so one rule keeps them out; each adapter adds its broker's bookkeeping names.
 */
import {isUtf8} from 'node:buffer'

import {RUN_ID_HEADER} from '../../envelope/fields.js'
import type {OutgoingMessage} from '../adapter.js'

/** bq's projected names and the replay marker, in every binding's spelling. */
export function isBqHeader(name: string): boolean {
  return /^bq[-_]/i.test(name)
}

/**
 * How a native value becomes an app-header string. `strings`: only values that are strings
 * already — on typed channels (AMQP field tables and application properties, SQS Number
 * attributes) writing a number or bytes back as a string would change its type, so such values
 * are left out rather than altered. `utf8-bytes`: Kafka header values are always bytes; valid
 * UTF-8 becomes its text (written back as the same bytes), anything else is left out.
 */
export type ValueRule = 'strings' | 'utf8-bytes'

export function losslessText(value: unknown, rule: ValueRule): string | undefined {
  if (typeof value === 'string') return value
  if (rule === 'utf8-bytes' && value instanceof Uint8Array && isUtf8(value)) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8')
  return undefined
}

/**
 * The app headers among native headers: neither bq's own (`isBqHeader`) nor the broker's
 * bookkeeping (`reserved`), with a value that converts without loss (see ValueRule).
 */
export function pickAppHeaders(
  headers: Record<string, unknown> | null | undefined,
  options: {reserved?: (name: string) => boolean; rule?: ValueRule} = {},
): Record<string, string> {
  const picked: Record<string, string> = {}
  if (headers === null || headers === undefined) return picked
  for (const [name, value] of Object.entries(headers)) {
    if (isBqHeader(name) || options.reserved?.(name)) continue
    const text = losslessText(value, options.rule ?? 'strings')
    if (text !== undefined) picked[name] = text
  }
  return picked
}

/**
 * The app headers to write with a message. bq's own names and the broker's reserved ones are
 * dropped: the adapter writes those from `fields` and `bypass`, and its projection wins.
 */
export function outgoingAppHeaders(message: OutgoingMessage, reserved?: (name: string) => boolean): Record<string, string> {
  const headers = pickAppHeaders(message.appHeaders, {reserved})
  // The one bq name written from here: the run that published this copy (never copied from a read).
  if (message.runId !== undefined) headers[RUN_ID_HEADER] = message.runId
  return headers
}
