import {randomUUID} from 'node:crypto'

import {Envelope, decode} from './envelope.js'
import {compactJson, parseJsonTree, JsonSyntaxError} from './json-tree.js'

export interface MakeOptions {
  /** Logical queue (`meta.queue`); defaults to `default`. */
  queue?: string
  /** Continue this trace; a new v4 UUID otherwise. */
  traceId?: string
  /** `meta.id`; a new v4 UUID otherwise (tests pin it). */
  id?: string
  /** `meta.created_at` in Unix ms; now otherwise. */
  createdAt?: number
  /** `meta.lang`; bq is a Node producer. */
  lang?: string
}

export class MakeError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'MakeError'
  }
}

/**
 * Produces a new canonical envelope (producer rules of spec-envelope.md): keys in spec order,
 * compact UTF-8 JSON with unicode and slashes unescaped, `attempts` 0, `schema_version` 1.
 *
 * `data` is either a JSON text — kept token for token (big integers, `99.90` and escapes survive),
 * only insignificant whitespace is dropped — or a plain value, serialised with JSON.stringify.
 */
export function make(urn: string, data: string | Record<string, unknown>, options: MakeOptions = {}): Envelope {
  if (typeof urn !== 'string' || urn.trim() === '') throw new MakeError('the URN is empty: every message needs a URN such as urn:babel:orders:created')
  const dataJson = typeof data === 'string' ? compactDataText(data) : serialiseData(data)
  const text =
    `{"job":${JSON.stringify(urn)},` +
    `"trace_id":${JSON.stringify(options.traceId ?? randomUUID())},` +
    `"data":${dataJson},` +
    `"meta":{"id":${JSON.stringify(options.id ?? randomUUID())},` +
    `"queue":${JSON.stringify(options.queue ?? 'default')},` +
    `"lang":${JSON.stringify(options.lang ?? 'node')},` +
    `"schema_version":1,` +
    `"created_at":${Math.trunc(options.createdAt ?? Date.now())}},` +
    `"attempts":0}`
  return decode(text)
}

/** Checks that a data text is one JSON object and compacts it losslessly. */
export function compactDataText(text: string): string {
  let tree
  try {
    tree = parseJsonTree(text)
  } catch (error) {
    if (error instanceof JsonSyntaxError) throw new MakeError(`data is not valid JSON: ${error.message}`)
    throw error
  }
  if (tree.kind !== 'object') throw new MakeError('data must be a JSON object (for example {"order_id":1042})')
  return compactJson(text, tree)
}

function serialiseData(data: Record<string, unknown>): string {
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw new MakeError('data must be a JSON object')
  return JSON.stringify(data)
}
