import {createHash} from 'node:crypto'

/**
 * What `bq trace ID` looks for. ID is a `trace_id` (a UUID or any other string), a 32-hex
 * OpenTelemetry TraceID, or a `meta.id`. spec-observability.md maps a `trace_id` onto a TraceID
 * one way: a UUID's 16 bytes as they are, any other string the first 16 bytes of its SHA-256.
 * A TraceID is mapped back the same way: the UUID those bytes spell, or, for non-UUID trace ids,
 * the hash of each candidate's `trace_id` compared with it (a hash cannot be inverted).
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const OTEL_TRACE_ID = /^[0-9a-f]{32}$/i

export function isUuid(text: string): boolean {
  return UUID.test(text)
}

/** The OTel TraceID (32 lowercase hex) the SDKs derive from a `trace_id` (spec-observability.md). */
export function otelTraceIdOf(traceId: string): string {
  if (isUuid(traceId)) return traceId.replaceAll('-', '').toLowerCase()
  // The spec also rules out the all-zero TraceID; a SHA-256 prefix of zeros is not a practical case.
  return createHash('sha256').update(traceId, 'utf8').digest('hex').slice(0, 32)
}

/** The canonical UUID spelled by 32 hex digits. */
function uuidOfHex(hex: string): string {
  const h = hex.toLowerCase()
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`
}

/** How a message was found to belong: its trace_id, its TraceID (hashed trace_id), or its meta.id. */
export type MatchedBy = 'trace_id' | 'otel_trace_id' | 'meta.id'

export interface TraceTarget {
  /** The ID as given. */
  text: string
  /** What kind of ID it reads as, for the report. */
  form: 'uuid' | 'otel' | 'other'
  /** trace_id values (lowercase for UUIDs) that belong to this ID. */
  traceIds: Set<string>
  /** The TraceID to compare hashed non-UUID trace ids with (the OTel form only). */
  hashedTraceId?: string
  /** meta.id values that belong to this ID. */
  metaIds: Set<string>
  /**
   * Byte strings one of which any raw body that could match contains: the scan looks for them
   * before any JSON parse. Empty when nothing narrows it this way (a TraceID of a hashed trace id:
   * each candidate's trace_id is hashed instead).
   */
  needles: Buffer[]
  /**
   * JSON escapes that could spell a character of the id (or, for a hashed TraceID, of the
   * `trace_id` key) without its plain bytes being in the body: `\u0037` for a `7`, `\/` for a
   * `/`. A body holding one is decoded rather than dropped. No encoder escapes a hex digit or a
   * dash by choice, so for hex ids such bodies are rare (Go's `\u003c` for `<` shares a prefix);
   * for other ids, `\u` (Python's ensure_ascii, Go's HTML escaping) or `\/` (PHP's default)
   * anywhere in a body costs a decode.
   */
  escapes: Buffer[]
}

/** Escapes of a hex digit (0-9, A-F, a-f) or a dash, as JSON may spell them. */
const HEX_ID_ESCAPES = ['\\u003', '\\u004', '\\u006', '\\u002d', '\\u002D']
/** Escapes of the `trace_id` key's letters and underscore, which a hashed TraceID's scan reads the key by. */
const TRACE_ID_KEY_ESCAPES = ['\\u005f', '\\u005F', '\\u007']
/** Any \u escape, and the escaped slash. */
const ANY_ESCAPES = ['\\u', '\\/']
const bytesOf = (escapes: string[]) => escapes.map((escape) => Buffer.from(escape, 'latin1'))

export function traceTarget(id: string): TraceTarget {
  const text = id.trim()
  const metaIds = new Set([text])
  if (isUuid(text)) {
    const lower = text.toLowerCase()
    // A meta.id is compared as written, and also in the lowercase form producers emit.
    metaIds.add(lower)
    return {text, form: 'uuid', traceIds: new Set([lower]), metaIds, needles: spellings(text, lower), escapes: bytesOf(HEX_ID_ESCAPES)}
  }
  if (OTEL_TRACE_ID.test(text)) {
    const uuid = uuidOfHex(text)
    // A 32-hex string may also be a trace_id or meta.id written that way.
    return {
      text,
      form: 'otel',
      traceIds: new Set([uuid, text]),
      hashedTraceId: text.toLowerCase(),
      metaIds,
      needles: [...spellings(uuid, uuid), ...spellings(text, text.toLowerCase())],
      escapes: bytesOf([...HEX_ID_ESCAPES, ...TRACE_ID_KEY_ESCAPES]),
    }
  }
  // JSON may escape a non-ASCII or quote character: the needle is the id as JSON writes it.
  const escaped = JSON.stringify(text).slice(1, -1)
  const needles = [Buffer.from(text, 'utf8')]
  if (escaped !== text) needles.push(Buffer.from(escaped, 'utf8'))
  return {text, form: 'other', traceIds: new Set([text]), metaIds, needles, escapes: bytesOf(ANY_ESCAPES)}
}

/** The spellings of a hex id a body may hold: as given, lowercase, uppercase. */
function spellings(given: string, lower: string): Buffer[] {
  return [...new Set([given, lower, lower.toUpperCase()])].map((s) => Buffer.from(s, 'latin1'))
}

/** Whether a message with these values belongs to the target, and how; undefined when it does not. */
export function matchOf(target: TraceTarget, traceId: string | undefined, metaId: string | undefined): MatchedBy | undefined {
  if (traceId !== undefined) {
    const normalized = isUuid(traceId) ? traceId.toLowerCase() : traceId
    if (target.traceIds.has(normalized)) return 'trace_id'
    if (target.hashedTraceId !== undefined && !isUuid(traceId) && otelTraceIdOf(traceId) === target.hashedTraceId) return 'otel_trace_id'
  }
  if (metaId !== undefined && (target.metaIds.has(metaId) || (isUuid(metaId) && target.metaIds.has(metaId.toLowerCase())))) return 'meta.id'
  return undefined
}
