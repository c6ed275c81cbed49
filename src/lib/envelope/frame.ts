/**
 * The transport-owned Redis frame of the reference SDKs (spec-observability.md): a Redis list
 * element has no metadata channel, so per-message headers ride in a JSON wrapper
 * `{"__bq_frame":1,"headers":{…},"body":"<the envelope text>"}`. A stored value is a frame iff it
 * is a JSON object with the reserved top-level key `__bq_frame` (a frozen envelope never has
 * it); anything else is a bare envelope, read as it is. Pure: no broker imports, so the Redis
 * adapter, the operations and file inputs share one reading.
 */
import {isUtf8} from 'node:buffer'

import {BqError} from '../errors.js'

/** The reserved key that marks a frame. */
export const FRAME_KEY = '__bq_frame'
/** The frame version bq reads and writes. */
export const FRAME_VERSION = 1

/** What a stored value is: a bare body, a frame (headers + the envelope's exact bytes), or a broken frame. */
export type FrameReading = {kind: 'bare'} | {kind: 'frame'; headers: Record<string, string>; body: Buffer} | {kind: 'malformed'; reason: string}

const MARK_TEXT = `"${FRAME_KEY}"`
const MARK = Buffer.from(MARK_TEXT)
const BARE: FrameReading = {kind: 'bare'}

/** Cheap pre-check: only bytes that contain `"__bq_frame"` can be a frame (an envelope is never parsed twice). */
export function mayBeFrame(value: Buffer | string): boolean {
  return typeof value === 'string' ? value.includes(MARK_TEXT) : value.includes(MARK)
}

/** Reads a stored value (see FrameReading). */
export function readFrame(value: Buffer | string): FrameReading {
  if (!mayBeFrame(value)) return BARE
  let parsed: unknown
  try {
    parsed = JSON.parse(typeof value === 'string' ? value : value.toString('utf8'))
  } catch {
    // Not JSON at all: whatever it is, it is not a frame (the envelope decoder says why).
    return BARE
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !Object.hasOwn(parsed, FRAME_KEY)) return BARE
  const frame = parsed as Record<string, unknown>
  const malformed = (why: string): FrameReading => ({kind: 'malformed', reason: `a ${FRAME_KEY} frame whose ${why}`})
  if (frame[FRAME_KEY] !== FRAME_VERSION) return malformed(`version is ${JSON.stringify(frame[FRAME_KEY])}, not ${FRAME_VERSION}`)
  const headers: Record<string, string> = {}
  // An absent `headers` is an empty set; a present one must map strings to strings.
  if (frame.headers !== undefined) {
    if (typeof frame.headers !== 'object' || frame.headers === null || Array.isArray(frame.headers)) return malformed('"headers" is not an object')
    for (const [name, text] of Object.entries(frame.headers)) {
      if (typeof text !== 'string') return malformed(`header "${name}" is not a string`)
      // defineProperty: a header named `__proto__` stays a plain entry.
      Object.defineProperty(headers, name, {value: text, enumerable: true, writable: true, configurable: true})
    }
  }
  if (typeof frame.body !== 'string') return malformed(frame.body === undefined ? '"body" is missing' : '"body" is not a string')
  if (LONE_SURROGATE.test(frame.body)) return malformed('"body" is not valid Unicode text (a lone surrogate)')
  return {kind: 'frame', headers, body: Buffer.from(frame.body, 'utf8')}
}

/**
 * The stored bytes of a frame around `body` (an envelope's exact UTF-8 bytes), shaped like the
 * SDKs': keys in the order `__bq_frame`, `headers`, `body`, compact JSON.
 */
export function writeFrame(body: Buffer, headers: Record<string, string>): Buffer {
  if (!isUtf8(body)) throw new BqError('cannot frame a body that is not UTF-8 text: a Redis frame carries the body as a JSON string')
  return Buffer.from(`{"${FRAME_KEY}":${FRAME_VERSION},"headers":${JSON.stringify(headers)},"body":${JSON.stringify(body.toString('utf8'))}}`, 'utf8')
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/
