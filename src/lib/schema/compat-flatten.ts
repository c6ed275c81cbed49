import {UsageError} from '../errors.js'
import type {Located} from './compat-types.js'
import {isSchemaObject, resolveRef} from './refs.js'

/**
 * One schema node as compat compares it: its own keywords merged with those of its `$ref`
 * target (draft-07 validators such as ajv apply both) and of its `allOf` branches, so that
 * moving a constraint into a definition or an allOf is not seen as a change. Keywords that
 * cannot be merged (two different `pattern`s) leave their branch in `residual`, compared whole.
 */

export interface FlatKeyword {
  value: unknown
  /** Where the keyword sits (null when the node was synthesized). */
  pointer: string | null
}

export interface FlatSchema {
  /** `false`, or a branch that is: nothing is valid. */
  never: boolean
  keywords: Map<string, FlatKeyword>
  /** Branches whose keywords clashed with ones already merged; compared as a whole. */
  residual: Located[]
  /** The node itself, as located (for the value checks that compile it). */
  origin: Located
}

/** Keywords that never change what is valid (annotations, and extensions such as x-gdpr-sensitive). */
const ANNOTATIONS = new Set(['$schema', '$id', '$comment', 'title', 'description', 'default', 'examples', 'readOnly', 'writeOnly', 'contentMediaType', 'contentEncoding', 'definitions', '$defs'])

export const isAnnotation = (keyword: string): boolean => ANNOTATIONS.has(keyword) || keyword.startsWith('x-')

const LOWER = new Set(['minimum', 'exclusiveMinimum', 'minLength', 'minItems', 'minProperties'])
const UPPER = new Set(['maximum', 'exclusiveMaximum', 'maxLength', 'maxItems', 'maxProperties'])

export function flatten(located: Located, root: unknown): FlatSchema {
  const flat: FlatSchema = {never: false, keywords: new Map(), residual: [], origin: located}
  const chain = new Set<unknown>()
  const visit = (loc: Located, via: string[]): void => {
    const schema = loc.schema
    if (schema === false) {
      flat.never = true
      return
    }
    if (!isSchemaObject(schema)) return
    if (chain.has(schema)) throw new UsageError(`the schema has a $ref cycle (${via.join(' → ')}) that never reaches a schema`, 'registry')
    chain.add(schema)
    const at = (key: string) => (loc.pointer === null ? null : `${loc.pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`)
    let clashed = false
    for (const [key, value] of Object.entries(schema)) {
      if (key === '$ref' || key === 'allOf' || isAnnotation(key)) continue
      const existing = flat.keywords.get(key)
      if (existing === undefined) flat.keywords.set(key, {value, pointer: at(key)})
      else if (!merge(key, existing, value, at(key))) clashed = true
    }
    if (clashed) flat.residual.push(loc)
    if (typeof schema.$ref === 'string') {
      const target = resolveRef(root, schema.$ref)
      if (target === undefined) throw new UsageError(`$ref ${schema.$ref} at ${loc.pointer === null ? '(merged)' : loc.pointer || '/'} cannot be resolved (bq resolves local #/… references only)`, 'registry')
      visit({schema: target, pointer: schema.$ref.startsWith('#') ? schema.$ref.slice(1) : null}, [...via, schema.$ref])
    }
    if (Array.isArray(schema.allOf)) schema.allOf.forEach((branch, i) => visit({schema: branch, pointer: loc.pointer === null ? null : `${loc.pointer}/allOf/${i}`}, via))
    chain.delete(schema)
  }
  visit(located, [located.pointer ?? '#'])
  return flat
}

/** Merges a second value of a keyword into the first; false when the two cannot be combined. */
function merge(key: string, existing: {value: unknown; pointer: string | null}, value: unknown, pointer: string | null): boolean {
  if (deepEqual(existing.value, value)) return true
  if (LOWER.has(key) && typeof existing.value === 'number' && typeof value === 'number') {
    if (value > existing.value) Object.assign(existing, {value, pointer})
    return true
  }
  if (UPPER.has(key) && typeof existing.value === 'number' && typeof value === 'number') {
    if (value < existing.value) Object.assign(existing, {value, pointer})
    return true
  }
  if (key === 'required' && Array.isArray(existing.value) && Array.isArray(value)) {
    existing.value = [...new Set([...existing.value, ...value])]
    return true
  }
  if (key === 'type') {
    const a = typesOf(existing.value)
    const b = typesOf(value)
    // integer is a number: {number} ∩ {integer} is {integer}.
    const both = a.filter((t) => b.includes(t) || (t === 'integer' && b.includes('number')))
    for (const t of b) if (t === 'integer' && a.includes('number') && !both.includes('integer')) both.push('integer')
    Object.assign(existing, {value: both, pointer})
    return true
  }
  if (key === 'properties' && isSchemaObject(existing.value) && isSchemaObject(value)) {
    const names = Object.keys(value)
    if (names.some((name) => Object.hasOwn(existing.value as object, name))) return false
    existing.value = {...existing.value, ...value}
    return true
  }
  if (key === 'uniqueItems') {
    existing.value = existing.value === true || value === true
    return true
  }
  return false
}

function typesOf(value: unknown): string[] {
  if (typeof value === 'string') return [value]
  return Array.isArray(value) ? value.filter((t): t is string => typeof t === 'string') : []
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((item, i) => deepEqual(item, b[i]))
  if (Array.isArray(b)) return false
  const ka = Object.keys(a as object)
  const kb = Object.keys(b as object)
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b as object, k) && deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
}
