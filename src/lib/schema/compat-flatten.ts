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

/**
 * Keywords whose meaning depends on a sibling in the same schema object: additionalProperties
 * sees only the properties/patternProperties beside it, additionalItems only the items beside
 * it, then/else only the if beside them. Merging them across allOf branches or a $ref would
 * change what they mean, so an object holding one is kept whole (residual) when another object
 * of the merge also speaks about the same group.
 */
const SIBLING_GROUPS: Array<{dependent: string[]; providers: string[]}> = [
  {dependent: ['additionalProperties'], providers: ['properties', 'patternProperties']},
  {dependent: ['additionalItems'], providers: ['items']},
  {dependent: ['then', 'else'], providers: ['if']},
]

export function flatten(located: Located, root: unknown): FlatSchema {
  const flat: FlatSchema = {never: false, keywords: new Map(), residual: [], origin: located}
  const members: Located[] = []
  const chain = new Set<unknown>()
  // First the schema objects that apply at this place: the node, its $ref targets, its allOf branches.
  const collect = (loc: Located, via: string[]): void => {
    const schema = loc.schema
    if (schema === false) {
      flat.never = true
      return
    }
    if (!isSchemaObject(schema)) return
    if (chain.has(schema)) throw new UsageError(`the schema has a $ref cycle (${via.join(' → ')}) that never reaches a schema`, 'registry')
    chain.add(schema)
    members.push(loc)
    if (typeof schema.$ref === 'string') {
      const target = resolveRef(root, schema.$ref)
      if (target === undefined) throw new UsageError(`$ref ${schema.$ref} at ${loc.pointer === null ? '(merged)' : loc.pointer || '/'} cannot be resolved (bq resolves local #/… references only)`, 'registry')
      collect({schema: target, pointer: refPointer(root, schema.$ref)}, [...via, schema.$ref])
    }
    if (Array.isArray(schema.allOf)) schema.allOf.forEach((branch, i) => collect({schema: branch, pointer: loc.pointer === null ? null : `${loc.pointer}/allOf/${i}`}, via))
    chain.delete(schema)
  }
  collect(located, [located.pointer ?? '#'])
  const kept = isolatedMembers(members)
  for (const loc of members) {
    const schema = loc.schema as Record<string, unknown>
    if (kept.has(loc)) {
      flat.residual.push({schema: ownKeywords(schema), pointer: null})
      continue
    }
    const at = (key: string) => (loc.pointer === null ? null : `${loc.pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`)
    let clashed = false
    for (const [key, value] of Object.entries(schema)) {
      if (key === '$ref' || key === 'allOf' || isAnnotation(key)) continue
      const existing = flat.keywords.get(key)
      if (existing === undefined) flat.keywords.set(key, {value, pointer: at(key)})
      else if (!merge(key, existing, value, at(key))) clashed = true
    }
    if (clashed) flat.residual.push({schema: ownKeywords(schema), pointer: null})
  }
  return flat
}

const owned = new WeakMap<object, Record<string, unknown>>()

/**
 * A member compared as a whole, its own keywords only (its $ref and allOf are members already).
 * The same object each time, so a recursive schema is recognised where it recurs.
 */
function ownKeywords(schema: Record<string, unknown>): Record<string, unknown> {
  let own = owned.get(schema)
  if (own === undefined) owned.set(schema, (own = Object.fromEntries(Object.entries(schema).filter(([key]) => key !== '$ref' && key !== 'allOf'))))
  return own
}

/** The members holding a sibling-dependent keyword when another member speaks about its group too. */
function isolatedMembers(members: Located[]): Set<Located> {
  const kept = new Set<Located>()
  if (members.length < 2) return kept
  for (const group of SIBLING_GROUPS) {
    const all = [...group.dependent, ...group.providers]
    const speaking = members.filter((m) => all.some((k) => Object.hasOwn(m.schema as object, k)))
    if (speaking.length < 2) continue
    for (const m of speaking) if (group.dependent.some((k) => Object.hasOwn(m.schema as object, k))) kept.add(m)
  }
  return kept
}

/** The JSON pointer a local $ref names (a plain-name fragment has none: null). */
function refPointer(root: unknown, ref: string): string | null {
  void root
  return ref === '#' ? '' : ref.startsWith('#/') ? ref.slice(1) : null
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

/**
 * Whether two schemas are the same, their local `$ref`s followed (two `{"$ref": "#/definitions/a"}`
 * are not the same when the definitions differ). A pair met again while comparing is taken as
 * the same: a recursive schema is equal to another when every step of it is.
 */
export function sameSchema(a: unknown, rootA: unknown, b: unknown, rootB: unknown, seen = new Set<string>(), ids = new Map<unknown, number>()): boolean {
  const id = (node: unknown) => {
    let n = ids.get(node)
    if (n === undefined) ids.set(node, (n = ids.size))
    return n
  }
  const walk = (x: unknown, y: unknown, inData: boolean): boolean => {
    if (x === y && (inData || typeof x !== 'object' || x === null)) return true
    if (typeof x !== typeof y || x === null || y === null || typeof x !== 'object') return x === y
    if (Array.isArray(x) || Array.isArray(y)) return Array.isArray(x) && Array.isArray(y) && x.length === y.length && x.every((item, i) => walk(item, y[i], inData))
    if (inData) return deepEqual(x, y)
    const ox = x as Record<string, unknown>
    const oy = y as Record<string, unknown>
    const kx = Object.keys(ox)
    const ky = Object.keys(oy)
    if (kx.length !== ky.length || !kx.every((k) => Object.hasOwn(oy, k))) return false
    for (const key of kx) {
      if (key === '$ref' && typeof ox.$ref === 'string' && typeof oy.$ref === 'string') {
        const pair = `${id(ox)}|${id(oy)}`
        if (seen.has(pair)) continue
        seen.add(pair)
        const tx = resolveRef(rootA, ox.$ref)
        const ty = resolveRef(rootB, oy.$ref)
        if (tx === undefined || ty === undefined || !walk(tx, ty, false)) return false
        continue
      }
      // enum, const, default and examples hold data: a "$ref" in them is a value.
      if (!walk(ox[key], oy[key], inData || DATA_KEYWORDS.has(key))) return false
    }
    return true
  }
  return walk(a, b, false)
}

const DATA_KEYWORDS = new Set(['enum', 'const', 'default', 'examples'])
