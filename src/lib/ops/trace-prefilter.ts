import {isUuid, matchOf, otelTraceIdOf} from './trace-id.js'
import type {TraceTarget} from './trace-id.js'
import type {BrowsePrefilter} from '../brokers/adapter.js'

/**
 * The cheap test a raw body passes before `bq trace` decodes it: a body that holds none of the
 * target's byte strings, and no JSON escape that could spell part of it, cannot match, and is
 * never parsed. For a TraceID of a hashed (non-UUID) trace id no byte string exists: each
 * `"trace_id":"…"` value in the bytes is hashed instead, and only a body whose value hashes to it
 * (or one too unusual to read this way) is decoded.
 */

const TRACE_ID_KEY = Buffer.from('"trace_id"', 'latin1')
const QUOTE = 0x22
const BACKSLASH = 0x5c
const COLON = 0x3a

export function couldMatch(body: Buffer, target: TraceTarget): boolean {
  for (const needle of target.needles) if (body.includes(needle)) return true
  if (mayHideTheId(body, target)) return true
  if (target.hashedTraceId === undefined) return false
  return hashedTraceIdIn(body, target.hashedTraceId)
}

/** Whether the body holds a JSON escape that could spell part of the id (TraceTarget.escapes); most bodies hold no backslash at all. */
function mayHideTheId(body: Buffer, target: TraceTarget): boolean {
  if (!body.includes(BACKSLASH)) return false
  return target.escapes.some((escape) => body.includes(escape))
}

/**
 * The same test handed to a browse (BrowseOptions.prefilter), so an adapter can skip building
 * messages trace would drop unread: the body as above, and any header value that, as text, is
 * the target's trace id or meta.id (a superset of the headers the binding projects them to).
 */
export function browsePrefilter(target: TraceTarget): BrowsePrefilter {
  return {
    body: (body) => couldMatch(body, target),
    // Only the byte strings' search holds for a whole buffer; a hashed id reads each value (above).
    ...(target.hashedTraceId === undefined ? {bodiesWithin: (bytes: Buffer) => couldMatch(bytes, target)} : {}),
    headerValue: (value) => {
      const text = value.toString('utf8')
      return text !== '' && matchOf(target, text, text) !== undefined
    },
  }
}

/** Whether some `"trace_id"` string value in the bytes hashes to `hashed`; true when a value cannot be read without a parse. */
function hashedTraceIdIn(body: Buffer, hashed: string): boolean {
  let from = 0
  for (;;) {
    const at = body.indexOf(TRACE_ID_KEY, from)
    if (at === -1) return false
    from = at + TRACE_ID_KEY.length
    let i = skipSpace(body, from)
    if (body[i] !== COLON) continue
    i = skipSpace(body, i + 1)
    if (body[i] !== QUOTE) continue
    const start = i + 1
    const end = body.indexOf(QUOTE, start)
    if (end === -1) return false
    const value = body.subarray(start, end)
    // An escape inside the value: leave it to the decoder.
    if (value.includes(BACKSLASH)) return true
    const text = value.toString('utf8')
    if (!isUuid(text) && otelTraceIdOf(text) === hashed) return true
    from = end + 1
  }
}

function skipSpace(body: Buffer, i: number): number {
  while (i < body.length && (body[i] === 0x20 || body[i] === 0x09 || body[i] === 0x0a || body[i] === 0x0d)) i++
  return i
}
