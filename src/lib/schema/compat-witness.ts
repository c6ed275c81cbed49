import type {Ajv, ValidateFunction} from 'ajv'

import {isSchemaObject, resolveRef, walk} from './refs.js'
import {newAjv} from './registry.js'

/**
 * A witness for `bq schema compat`: a concrete value OLD accepts and NEW rejects, both checked
 * with bq's own validator (ajv, as registry.ts configures it). The search is a seeded, bounded
 * generator: the values both schemas mention (enum and const values, bounds and their
 * neighbours, multiples, property names, strings from patterns), values built from OLD's shape
 * (its properties, items, branches and definitions), and values the validator is known to judge
 * by its own arithmetic (1e21, 3000000000, "a\nb"). Finding none proves nothing; finding one
 * proves the change breaks.
 */

export interface WitnessOptions {
  /** Generated values tried after the fixed ones (default 400). */
  tries?: number
  seed?: number
}

export type Validator = (value: unknown) => boolean

/** Compiles a schema with bq's validator; undefined when it does not compile. Cached by content. */
export function validatorOf(schema: unknown): Validator | undefined {
  const key = JSON.stringify(schema)
  if (cache.has(key)) return cache.get(key) ?? undefined
  let compiled: ValidateFunction | undefined
  try {
    compiled = instance().compile(schema as object)
  } catch {
    // A schema whose $ids clash with one compiled earlier: once more with a validator of its own.
    try {
      compiled = newAjv(YES_OR_NO).compile(schema as object)
    } catch {
      compiled = undefined
    }
  }
  if (cache.size > 2000) {
    cache.clear()
    ajv = undefined
  }
  const validate: Validator | undefined = compiled && ((value) => compiled(value) as boolean)
  cache.set(key, validate ?? null)
  return validate
}

/** Only a yes or no is asked: no error list, no messages, no code optimisation (compiles faster, judges the same). */
const YES_OR_NO = {addUsedSchema: false, allErrors: false, messages: false, code: {optimize: false}}
let ajv: Ajv | undefined
const cache = new Map<string, Validator | null>()
const instance = (): Ajv => (ajv ??= newAjv(YES_OR_NO))

export function findWitness(oldSchema: unknown, newSchema: unknown, options: WitnessOptions = {}): {value: unknown} | undefined {
  const accepts = validatorOf(oldSchema)
  const rejects = validatorOf(newSchema)
  if (accepts === undefined || rejects === undefined) return undefined
  const breaks = (value: unknown) => {
    try {
      return accepts(value) && !rejects(value)
    } catch {
      return false
    }
  }
  const pool = new Pool([oldSchema, newSchema])
  for (const value of pool.fixed()) if (breaks(value)) return {value}
  const generator = new Generator(pool, oldSchema, newSchema, seeded(options.seed ?? 1))
  const tries = options.tries ?? 400
  for (let i = 0; i < tries; i++) {
    const value = generator.next(i)
    if (breaks(value)) return {value}
  }
  return undefined
}

const BASE_NUMBERS = [0, 1, -1, 2, 3, 5, 10, 0.1, 0.3, 0.5, 1.5, 2.5, -0.5, 100, 2 ** 31, 3000000000, -3000000000, 2 ** 53, 2 ** 53 + 2, 1e21, 1.5e21, 2e21, 3.5e38, 1e300]
const BASE_STRINGS = ['', 'a', 'b', 'x', 'ab', 'x1', 'abc', 'a\nb', '\n', 'A', '0', '1', 'a@b.co', 'http://a.b/', '2020-01-01', '2020-01-01T00:00:00Z', '12:00:00Z', '1.2.3.4', '::1', 'a.b', '00000000-0000-0000-0000-000000000000', 'é', 'aaaaaaaaaaaaaaaaaaaa']
const FORMAT_SAMPLES: Record<string, string[]> = {
  email: ['a@b.co'], uri: ['http://a.b/'], 'uri-reference': ['a'], date: ['2020-01-01'], 'date-time': ['2020-01-01T00:00:00Z'], time: ['12:00:00Z'],
  ipv4: ['1.2.3.4'], ipv6: ['::1'], hostname: ['a.b'], uuid: ['00000000-0000-0000-0000-000000000000'], regex: ['a'], 'json-pointer': ['/a'],
}

/** The values both documents mention, and their neighbours. */
class Pool {
  readonly numbers = new Set<number>(BASE_NUMBERS)
  readonly strings = new Set<string>(BASE_STRINGS)
  readonly names = new Set<string>(['a', 'b', 'x', 'x1', 'ab'])
  readonly wholes: unknown[] = []

  constructor(documents: unknown[]) {
    for (const document of documents) walk(document, [], (node) => this.learn(node))
  }

  fixed(): unknown[] {
    const objects = [{}, ...[...this.names].map((n) => ({[n]: 1})), ...[...this.names].map((n) => ({[n]: 'a'}))]
    return [null, true, false, ...this.numbers, ...this.strings, ...this.wholes, [], [1], ['a'], [1, 1], ['a', 'a'], ...objects]
  }

  private learn(node: Record<string, unknown>): void {
    for (const key of ['enum', 'const', 'default', 'examples'] as const) {
      const v = node[key]
      if (v === undefined) continue
      for (const item of key === 'enum' || key === 'examples' ? (Array.isArray(v) ? v.slice(0, 50) : []) : [v]) {
        this.wholes.push(item)
        if (typeof item === 'number') this.numbers.add(item)
        if (typeof item === 'string') this.strings.add(item)
      }
    }
    for (const key of ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum']) {
      const v = node[key]
      if (typeof v === 'number') for (const d of [0, 1, -1, 0.5, -0.5]) this.numbers.add(v + d)
    }
    const step = node.multipleOf
    if (typeof step === 'number' && step > 0) for (const k of [1, 2, 3, 0.5, 1e20, 5e20, 1e21]) this.numbers.add(step * k)
    for (const key of ['minLength', 'maxLength']) {
      const v = node[key]
      if (typeof v === 'number' && v >= 0 && v < 200) for (const n of [v - 1, v, v + 1]) if (n >= 0) this.strings.add('a'.repeat(n))
    }
    if (typeof node.pattern === 'string') for (const s of fromPattern(node.pattern)) this.strings.add(s)
    if (typeof node.format === 'string') for (const s of FORMAT_SAMPLES[node.format] ?? []) this.strings.add(s)
    if (isSchemaObject(node.properties)) for (const name of Object.keys(node.properties)) this.names.add(name)
    if (Array.isArray(node.required)) for (const name of node.required) if (typeof name === 'string') this.names.add(name)
    if (isSchemaObject(node.patternProperties)) for (const source of Object.keys(node.patternProperties)) for (const s of fromPattern(source)) this.names.add(s)
    for (const name of this.names) this.strings.add(name)
  }
}

/** Strings a pattern probably matches, and some it probably does not: its literal parts. */
function fromPattern(source: string): string[] {
  const literal = source.replace(/^\^/, '').replace(/\$$/, '').replace(/\\(.)/g, '$1').replace(/[()[\]{}*+?|.^$]/g, '')
  return [literal, `${literal}z`, `z${literal}`, `${literal}\n`, literal.slice(0, 1)]
}

/** Values built from OLD's shape (and now and then from NEW's), seeded. */
class Generator {
  private readonly numbers: number[]
  private readonly strings: string[]
  private readonly names: string[]

  constructor(private readonly pool: Pool, private readonly oldRoot: unknown, private readonly newRoot: unknown, private readonly random: () => number) {
    this.numbers = [...pool.numbers]
    this.strings = [...pool.strings]
    this.names = [...pool.names]
  }

  next(i: number): unknown {
    const root = i % 5 === 4 ? this.newRoot : this.oldRoot
    return this.value(root, root, 4)
  }

  private pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.random() * list.length)]
  }

  private any(depth: number): unknown {
    const kind = this.pick(['null', 'boolean', 'number', 'integer', 'string', 'string', 'object', 'array'])
    return this.ofType(kind, [], depth)
  }

  private value(schema: unknown, root: unknown, depth: number): unknown {
    if (!isSchemaObject(schema) || depth <= 0 || this.random() < 0.08) return depth <= 0 ? this.scalar() : this.any(depth - 1)
    const facets = this.facets(schema, root)
    for (const f of facets) {
      if (f.const !== undefined && this.random() < 0.9) return f.const
      if (Array.isArray(f.enum) && f.enum.length > 0 && this.random() < 0.9) return this.pick(f.enum)
    }
    let types: string[] | undefined
    for (const f of facets) {
      const declared = typeof f.type === 'string' ? [f.type] : Array.isArray(f.type) ? (f.type as string[]) : undefined
      if (declared === undefined) continue
      const widened = declared.includes('number') ? [...declared, 'integer'] : declared
      types = types === undefined ? widened : types.filter((t) => widened.includes(t) || (t === 'number' && widened.includes('integer')))
    }
    const kinds = types === undefined || types.length === 0 ? ['null', 'boolean', 'number', 'integer', 'string', 'object', 'array'] : types
    return this.ofType(this.pick(kinds), facets.map((f) => ({schema: f, root})), depth)
  }

  /** The schema objects that apply at a place: the node, its $ref targets and allOf, one branch of each anyOf/oneOf, a then or else. */
  private facets(schema: Record<string, unknown>, root: unknown): Record<string, unknown>[] {
    const found: Record<string, unknown>[] = []
    const visit = (node: unknown, budget: number) => {
      if (!isSchemaObject(node) || budget <= 0 || found.includes(node)) return
      found.push(node)
      if (typeof node.$ref === 'string') visit(resolveRef(root, node.$ref), budget - 1)
      if (Array.isArray(node.allOf)) for (const branch of node.allOf) visit(branch, budget - 1)
      for (const key of ['anyOf', 'oneOf']) if (Array.isArray(node[key]) && (node[key] as unknown[]).length > 0) visit(this.pick(node[key] as unknown[]), budget - 1)
      if (node.if !== undefined) visit(this.random() < 0.5 ? node.then : node.else, budget - 1)
    }
    visit(schema, 6)
    return found
  }

  private scalar(): unknown {
    const r = this.random()
    return r < 0.4 ? this.pick(this.numbers) : r < 0.85 ? this.pick(this.strings) : this.pick([null, true, false])
  }

  private ofType(kind: string, facets: Array<{schema: Record<string, unknown>; root: unknown}>, depth: number): unknown {
    switch (kind) {
      case 'null': return null
      case 'boolean': return this.random() < 0.5
      case 'integer': return this.pick(this.numbers.filter(Number.isInteger))
      case 'number': return this.pick(this.numbers)
      case 'string': return this.pick(this.strings)
      case 'array': {
        const itemSchemas = facets.map((f) => ({items: f.schema.items, contains: f.schema.contains, root: f.root}))
        const length = Math.floor(this.random() * 4)
        const out: unknown[] = []
        for (let i = 0; i < length; i++) {
          const source = itemSchemas.length > 0 ? this.pick(itemSchemas) : undefined
          const items = source?.items
          const schema = Array.isArray(items) ? items[i] : this.random() < 0.2 && source?.contains !== undefined ? source.contains : items
          out.push(schema === undefined ? this.any(depth - 1) : this.value(schema, source!.root, depth - 1))
        }
        return out
      }
      default: {
        const out: Record<string, unknown> = {}
        for (const {schema, root} of facets) {
          const required = Array.isArray(schema.required) ? schema.required : []
          if (isSchemaObject(schema.properties)) {
            for (const [name, sub] of Object.entries(schema.properties)) if (required.includes(name) || this.random() < 0.6) out[name] = this.value(sub, root, depth - 1)
          }
          for (const name of required) if (typeof name === 'string' && !(name in out) && this.random() < 0.9) out[name] = this.any(depth - 1)
          if (isSchemaObject(schema.patternProperties) && this.random() < 0.5) {
            for (const [source, sub] of Object.entries(schema.patternProperties)) if (this.random() < 0.6) out[this.pick(fromPattern(source))] = this.value(sub, root, depth - 1)
          }
        }
        if (this.random() < 0.3) out[this.pick(this.names)] = this.any(depth - 1)
        return out
      }
    }
  }
}

/** A small seeded generator (mulberry32): the same schemas give the same search (and the tests' seeded corpora). */
export function seeded(seed: number): () => number {
  let state = seed | 0
  return () => {
    state = (state + 0x6d2b79f5) | 0
    let t = Math.imul(state ^ (state >>> 15), 1 | state)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
