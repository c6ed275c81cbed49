import {maskedExportLine, wrapExportLine} from '../envelope/export-line.js'
import {compactJson, parseJsonTree} from '../envelope/json-tree.js'
import type {Masker} from '../ops/mask.js'
import type {MessageView} from '../ops/message-view.js'
import {formatAge, formatBytes, isoTime} from './table.js'

/** How messages look in tables and JSON, shared by peek and dlq inspect --list. */

export const MESSAGE_HEAD = ['#', 'id', 'urn', 'trace', 'attempts', 'age', 'lang', 'size', 'valid']

export function messageRow(view: MessageView, now = Date.now()): string[] {
  const created = view.createdAt ?? view.message.enqueuedAt
  return [
    view.message.position ?? '',
    view.id ?? '-',
    view.urn ?? '-',
    view.traceId ?? '-',
    view.attempts === undefined ? '-' : String(view.attempts),
    formatAge(created === undefined ? undefined : now - created),
    view.lang ?? '-',
    formatBytes(view.size),
    view.decodeError ? 'poison' : view.valid === false ? '✗' : '✓',
  ]
}

/** The JSON shape of one message (stable; documented in docs/messages.md). */
export function messageJson(view: MessageView, options: {headers?: boolean} = {}): Record<string, unknown> {
  return {
    position: view.message.position ?? null,
    id: view.id ?? null,
    urn: view.urn ?? null,
    trace_id: view.traceId ?? null,
    attempts: view.attempts ?? null,
    created_at: isoTime(view.createdAt) ?? null,
    enqueued_at: isoTime(view.message.enqueuedAt) ?? null,
    lang: view.lang ?? null,
    size: view.size,
    valid: view.decodeError ? false : (view.valid ?? null),
    poison: view.decodeError ?? null,
    dead_letter: deadLetterJson(view),
    body: view.envelope ? view.envelope.text : view.message.body.toString('base64'),
    body_encoding: view.envelope ? 'utf8' : 'base64',
    ...(options.headers ? {headers: view.message.headers} : {}),
  }
}

/**
 * The dead_letter block in JSON: snake_case keys, failed_at as an ISO time (JSON never prints
 * epoch numbers for times). Absent values are left out, as in the envelope's own block.
 */
export function deadLetterJson(view: MessageView): Record<string, unknown> | null {
  const d = view.deadLetter
  if (d === undefined) return null
  const out: Record<string, unknown> = {
    reason: d.reason,
    error: d.error,
    exception: d.exception,
    failed_at: isoTime(d.failedAt),
    original_queue: d.originalQueue,
    attempts: d.attempts,
    lang: d.lang,
    native: d.native,
  }
  for (const key of Object.keys(out)) if (out[key] === undefined) delete out[key]
  return out
}

/** One exportable JSONL line: the envelope with insignificant whitespace removed, every token kept. */
export function jsonlLine(view: MessageView): string | undefined {
  if (!view.envelope) return undefined
  return compactJson(view.envelope.text, view.envelope.root)
}

/** One header-keeping export line (`--jsonl --with-headers`): `{"envelope":…,"headers":{…},"native":{…}}`, see export-line.ts. */
export function jsonlLineWithHeaders(view: MessageView): string | undefined {
  if (!view.envelope) return undefined
  return wrapExportLine(view.envelope.text, view.envelope.root, view.message.appHeaders ?? {}, view.message.nativeProperties)
}

/**
 * One export line (`--jsonl`, with `withHeaders` the header-keeping form). With a masker, a
 * message whose PII fields were masked becomes a masked line, which `bq replay` refuses.
 */
export function exportLine(view: MessageView, options: {withHeaders: boolean; masker?: Masker}): string | undefined {
  if (!view.envelope) return undefined
  const masked = options.masker?.mask(view.envelope)
  if (masked !== undefined) return maskedExportLine(masked.text, parseJsonTree(masked.text), masked.fields, options.withHeaders ? (view.message.appHeaders ?? {}) : undefined)
  return options.withHeaders ? jsonlLineWithHeaders(view) : jsonlLine(view)
}

/** messageJson with the PII fields of `body` masked (and listed under `masked`) when a masker is given. */
export function maskedMessageJson(view: MessageView, options: {headers?: boolean; masker?: Masker}): Record<string, unknown> {
  const json = messageJson(view, options)
  const masked = view.envelope && options.masker?.mask(view.envelope)
  return masked ? {...json, body: masked.text, masked: masked.fields} : json
}
