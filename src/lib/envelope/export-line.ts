/**
 * The header-keeping export line (`bq peek --jsonl --with-headers`, read by `bq replay` and
 * `bq validate`): one JSON object per message,
 *
 *   {"envelope":{…the envelope…},"headers":{"traceparent":"00-…","x-custom":"v"}}
 *
 * `envelope` is the envelope's own text spliced in (insignificant whitespace removed, every token
 * as stored), never re-serialized, so big integers and number spellings survive. `headers` holds
 * the message's application headers, string → string. A line that is not this shape is an
 * envelope line, as `--jsonl` writes.
 *
 * Backups and header-keeping exports of brokers that can restore them add a fourth key,
 * `"native":{"broker":"rabbitmq","properties":{…}}`: the message's native properties as the broker
 * held them (adapter.ts NativeProperties), which `bq replay --as-is` writes back to that broker
 * (docs/restore-fidelity.md). Lines without it (older backups) restore as before.
 *
 * A masked export (peek with --registry, without --unmask) writes each message that had PII
 * masked as this wrapper with a third key, `"masked":["data.email",…]`: its data is no longer the
 * message's, so `bq replay` refuses such a line (reads it as kind `masked`) instead of publishing it.
 */
import {JsonSyntaxError, compactJson, parseJsonTree, sourceOf, type JsonNode} from './json-tree.js'
import {childPath} from './validate.js'
import type {NativeProperties} from '../brokers/adapter.js'

export const EXPORT_ENVELOPE_KEY = 'envelope'
export const EXPORT_HEADERS_KEY = 'headers'
export const EXPORT_MASKED_KEY = 'masked'
export const EXPORT_NATIVE_KEY = 'native'

/** What one input line is: a plain envelope line, a wrapped one, or a wrapped one that is broken. */
export type ExportLine =
  | {kind: 'envelope'}
  | {kind: 'wrapped'; envelope: string; headers: Record<string, string>; native?: NativeProperties}
  | {kind: 'broken'; path: string; message: string}
  /** A masked export line: the envelope inside is not the message (its PII fields were replaced). */
  | {kind: 'masked'; envelope: string; fields: string[]}

/** Writes a wrapped line around an envelope's text (`root` is its parsed tree). */
export function wrapExportLine(envelopeText: string, root: JsonNode, headers: Record<string, string>, native?: NativeProperties): string {
  const kept = native === undefined ? '' : `,"${EXPORT_NATIVE_KEY}":${JSON.stringify({broker: native.broker, properties: native.properties})}`
  return `{"${EXPORT_ENVELOPE_KEY}":${compactJson(envelopeText, root)},"${EXPORT_HEADERS_KEY}":${JSON.stringify(headers)}${kept}}`
}

/** Writes a masked line: the masked envelope's text, the headers when kept, and the masked fields. */
export function maskedExportLine(maskedText: string, root: JsonNode, fields: string[], headers?: Record<string, string>): string {
  const kept = headers === undefined ? '' : `,"${EXPORT_HEADERS_KEY}":${JSON.stringify(headers)}`
  return `{"${EXPORT_ENVELOPE_KEY}":${compactJson(maskedText, root)}${kept},"${EXPORT_MASKED_KEY}":${JSON.stringify(fields)}}`
}

/** Cheap gate: only a line whose first key is one of the wrapper's is parsed a second time. */
const WRAPPED_START = /^\s*\{\s*"(?:envelope|headers|masked|native)"\s*:/

/**
 * Reads a line: wrapped when it is an object whose keys are exactly `envelope` (an object) and
 * optionally `headers` — an envelope always has `job`/`urn` and `meta`, so it never looks like one.
 */
export function readExportLine(text: string): ExportLine {
  if (!WRAPPED_START.test(text)) return {kind: 'envelope'}
  let root: JsonNode
  try {
    root = parseJsonTree(text)
  } catch (error) {
    if (error instanceof JsonSyntaxError) return {kind: 'envelope'}
    throw error
  }
  if (root.kind !== 'object') return {kind: 'envelope'}
  const keys = root.members.map((member) => member.key)
  const known = keys.every((key) => key === EXPORT_ENVELOPE_KEY || key === EXPORT_HEADERS_KEY || key === EXPORT_MASKED_KEY || key === EXPORT_NATIVE_KEY)
  if (!known || !keys.includes(EXPORT_ENVELOPE_KEY)) return {kind: 'envelope'}
  if (new Set(keys).size !== keys.length) return {kind: 'broken', path: '$', message: 'an export line names "envelope", "headers", "masked" or "native" twice'}
  const envelope = root.members.find((member) => member.key === EXPORT_ENVELOPE_KEY)!.value
  if (envelope.kind !== 'object') return {kind: 'broken', path: '$.envelope', message: 'an export line\'s "envelope" must be a JSON object (the envelope)'}
  const maskedNode = root.members.find((member) => member.key === EXPORT_MASKED_KEY)?.value
  if (maskedNode !== undefined) {
    // Whatever else the line holds, its data is not the message's.
    const fields = maskedNode.kind === 'array' ? maskedNode.items.flatMap((item) => (item.kind === 'string' ? [item.value] : [])) : []
    return {kind: 'masked', envelope: sourceOf(text, envelope), fields}
  }
  const headersNode = root.members.find((member) => member.key === EXPORT_HEADERS_KEY)?.value
  const headers: Record<string, string> = {}
  if (headersNode !== undefined) {
    if (headersNode.kind !== 'object') return {kind: 'broken', path: '$.headers', message: 'an export line\'s "headers" must be an object of strings'}
    for (const member of headersNode.members) {
      if (member.value.kind !== 'string') return {kind: 'broken', path: childPath('$.headers', member.key), message: `header "${member.key}" must be a string`}
      headers[member.key] = member.value.value
    }
  }
  const nativeNode = root.members.find((member) => member.key === EXPORT_NATIVE_KEY)?.value
  if (nativeNode === undefined) return {kind: 'wrapped', envelope: sourceOf(text, envelope), headers}
  const native = nativeNode.kind === 'object' ? (JSON.parse(sourceOf(text, nativeNode)) as Partial<NativeProperties>) : undefined
  if (native === undefined || typeof native.broker !== 'string' || native.properties === null || typeof native.properties !== 'object' || Array.isArray(native.properties)) {
    return {kind: 'broken', path: '$.native', message: 'an export line\'s "native" must be {"broker":"<kind>","properties":{…}}'}
  }
  return {kind: 'wrapped', envelope: sourceOf(text, envelope), headers, native: {broker: native.broker, properties: native.properties}}
}
