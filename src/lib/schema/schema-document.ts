import type {Ajv} from 'ajv'

import {UsageError} from '../errors.js'
import {precompiledMetaSchema} from './precompiled-meta-schema.js'
import type {MetaSchemaValidator} from './precompiled-meta-schema.js'
import {isSchemaObject} from './refs.js'

/**
 * What every schema bq reads must pass before its validator compiles it: not nested beyond what
 * the walkers (and ajv's code generator) handle, of the draft bq validates, and valid against
 * draft-07's meta-schema. Each refusal is one line (exit 2), never a stack overflow.
 */

/** Deeper than any real data schema; a deeper one would overflow the recursive walkers. */
export const MAX_NESTING = 200

/** The nesting depth of a JSON value, counted without recursion. */
export function nestingDepth(value: unknown, stopAt = Number.POSITIVE_INFINITY): number {
  let deepest = 0
  const stack: Array<[unknown, number]> = [[value, 1]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!
    if (typeof node !== 'object' || node === null) continue
    if (depth > deepest) deepest = depth
    if (deepest > stopAt) return deepest
    for (const child of Array.isArray(node) ? node : Object.values(node)) if (typeof child === 'object' && child !== null) stack.push([child, depth + 1])
  }
  return deepest
}

export function requireShallow(value: unknown, label: string): void {
  if (nestingDepth(value, MAX_NESTING) > MAX_NESTING) throw new UsageError(`${label}: nested more than ${MAX_NESTING} levels deep (bq refuses such a schema)`, 'registry')
}

/**
 * bq validates draft-07 (ajv's default). A schema that declares draft-04 or draft-06 means other
 * things by the same keywords (draft-04's boolean exclusiveMinimum, `id`), and 2019-09/2020-12
 * have keywords draft-07 ignores: refused, naming the draft, rather than judged by the wrong rules.
 */
export function requireSupportedDraft(schema: unknown, label: string): void {
  const declared = (schema as {$schema?: unknown})?.$schema
  if (declared === undefined || !isSchemaObject(schema)) return
  if (typeof declared !== 'string') throw new UsageError(`${label}: $schema must be a string (bq validates draft-07 schemas)`, 'registry')
  const draft = /draft-0?(\d+)/.exec(declared)?.[1] ?? /\/(\d{4}-\d{2})\//.exec(declared)?.[1]
  if (draft === '7') return
  const name = draft === undefined ? declared : /^\d+$/.test(draft) ? `draft-0${draft}` : draft
  throw new UsageError(`${label}: $schema ${name} is not supported (bq validates draft-07 schemas only)`, 'registry')
}

/**
 * The draft-07 meta-schema check, in linear time: ajv checks `enum`'s uniqueItems by comparing
 * every pair, so enum values are checked for repeats here (by canonical text) and the meta-schema
 * sees each enum as one value. The check runs on the build's precompiled validator
 * (precompiled-meta-schema.ts) when there is one and the schema is an object that names no
 * meta-schema or draft-07's by its id; anything else (another spelling of `$schema`, which ajv
 * resolves or refuses in its own way, a value that is not an object) goes to `ajv`, called only
 * then, so a caller that has none loaded can pass a function that loads it.
 */
export function metaSchemaProblem(schema: unknown, ajv: Ajv | (() => Ajv)): string | undefined {
  if (typeof schema === 'boolean') return undefined
  let repeated: string | undefined
  const view = shortenEnums(schema, (pointer) => (repeated ??= `${pointer || '/'} enum values must be unique`))
  if (repeated !== undefined) return repeated
  let errors: MetaSchemaValidator['errors']
  const precompiled = precompiledMetaSchemaApplies(schema) ? precompiledMetaSchema : undefined
  if (precompiled !== undefined) {
    if (precompiled(view)) return undefined
    errors = precompiled.errors
  } else {
    const validator = typeof ajv === 'function' ? ajv() : ajv
    if (validator.validateSchema(view as object)) return undefined
    errors = validator.errors
  }
  const first = errors?.[0]
  return first ? `${first.instancePath || '/'} ${first.message}` : 'rejected by the draft-07 meta-schema'
}

const DRAFT_07_IDS = new Set([undefined, 'http://json-schema.org/draft-07/schema', 'http://json-schema.org/draft-07/schema#'])

/** Whether metaSchemaProblem checks this schema without ajv (the build's precompiled validator). */
export function precompiledMetaSchemaApplies(schema: unknown): boolean {
  return precompiledMetaSchema !== undefined && isSchemaObject(schema) && DRAFT_07_IDS.has(schema.$schema as string | undefined)
}

/** An enum this long or shorter is left whole: ajv's pairwise uniqueItems on it is cheap. */
const SHORT_ENUM = 16

/** Where shortenEnums is, as a chain of keys: the JSON pointer is spelled out only for a repeat. */
interface Place {
  parent?: Place
  key: string | number
}
const pointerOf = (place: Place | undefined): string => (place === undefined ? '' : `${pointerOf(place.parent)}/${String(place.key).replace(/~/g, '~0').replace(/\//g, '~1')}`)

/**
 * The schema with each long enum cut to its first value (after checking it for repeats); the
 * parts without one are the schema's own objects, not copies (less to allocate per schema).
 */
function shortenEnums(node: unknown, onRepeat: (pointer: string) => void, place?: Place): unknown {
  if (Array.isArray(node)) {
    let out: unknown[] | undefined
    for (let i = 0; i < node.length; i++) {
      const item: unknown = node[i]
      const shortened = typeof item === 'object' && item !== null ? shortenEnums(item, onRepeat, {parent: place, key: i}) : item
      if (shortened !== item) (out ??= [...node])[i] = shortened
    }
    return out ?? node
  }
  if (!isSchemaObject(node)) return node
  let out: Record<string, unknown> | undefined
  for (const key in node) {
    if (key === 'const' || key === 'default' || key === 'examples') continue
    const value = node[key]
    let shortened = value
    if (key === 'enum' && Array.isArray(value) && value.length > 0) {
      if (new Set(value.map(canonical)).size !== value.length) onRepeat(pointerOf({parent: place, key}))
      if (value.length > SHORT_ENUM) shortened = [value[0]]
    } else if (typeof value === 'object' && value !== null) shortened = shortenEnums(value, onRepeat, {parent: place, key})
    if (shortened !== value) (out ??= {...node})[key] = shortened
  }
  return out ?? node
}

/** A JSON value as text with object keys sorted: equal texts for values deep equality calls equal. */
export function canonical(value: unknown): string {
  if (typeof value !== 'object' || value === null) return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`
}
