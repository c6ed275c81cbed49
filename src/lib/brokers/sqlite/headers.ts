/**
 * The embedded store's "native metadata": a JSON object stored next to each body, projected
 * from the envelope fields at publish time so `bq peek --headers` shows something honest.
 * The body stays authoritative; these are a copy.
 */
import {REPLAY_BYPASS_HEADER, type NativeFields} from '../../envelope/fields.js'
import type {OutgoingMessage} from '../adapter.js'
import {outgoingAppHeaders, pickAppHeaders} from '../shared/app-headers.js'

/** The value stamped for the replay marker. */
const BYPASS_VALUE = '1'

export type StoredHeaders = Record<string, string | number>

export function projectHeaders(message: OutgoingMessage): StoredHeaders {
  // App headers first, so bq's projection (written after) wins on any clash.
  const headers: StoredHeaders = {...outgoingAppHeaders(message)}
  const fields = message.fields
  if (fields !== null) {
    headers['bq-job'] = fields.job
    headers['bq-trace-id'] = fields.traceId
    headers['bq-message-id'] = fields.id
    headers['bq-source-lang'] = fields.lang
    headers['bq-attempts'] = fields.attempts
  }
  if (message.bypass === true) headers[REPLAY_BYPASS_HEADER] = BYPASS_VALUE
  return headers
}

/** Parses stored header text; anything unreadable shows as no headers rather than failing a browse. */
export function parseHeaders(text: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(text)
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

/** The stored headers that are not bq's: string values only (the column keeps bq's numbers as numbers). */
export function appHeadersOf(headers: Record<string, unknown>): Record<string, string> {
  return pickAppHeaders(headers)
}

/** The inverse projection. */
export function nativeFromHeaders(headers: Record<string, unknown>): NativeFields {
  const native: NativeFields = {}
  const text = (key: string) => (typeof headers[key] === 'string' && headers[key] !== '' ? (headers[key] as string) : undefined)
  const job = text('bq-job')
  const traceId = text('bq-trace-id')
  const id = text('bq-message-id')
  const lang = text('bq-source-lang')
  if (job !== undefined) native.job = job
  if (traceId !== undefined) native.traceId = traceId
  if (id !== undefined) native.id = id
  if (lang !== undefined) native.lang = lang
  const attempts = headers['bq-attempts']
  if (typeof attempts === 'number' && Number.isSafeInteger(attempts) && attempts >= 0) native.attempts = attempts
  if (headers[REPLAY_BYPASS_HEADER] !== undefined) native.replayBypass = true
  return native
}
