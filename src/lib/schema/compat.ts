import type {Ajv, ValidateFunction} from 'ajv'

import {UsageError} from '../errors.js'
import {flatten, deepEqual, sameSchema} from './compat-flatten.js'
import type {FlatSchema} from './compat-flatten.js'
import {arrayRules, combinatorRules, formatRule, numberRules, objectRules, stringRules} from './compat-rules.js'
import type {RuleInput} from './compat-rules.js'
import {JSON_TYPES} from './compat-types.js'
import type {CompareContext, CompatFinding, JsonType, Located, SubCompare} from './compat-types.js'
import {findWitness} from './compat-witness.js'
import {refProblems} from './refs.js'
import {newAjv} from './registry.js'
import {canonical, metaSchemaProblem, requireShallow, requireSupportedDraft} from './schema-document.js'

/**
 * `bq schema compat`: every way data valid under OLD could be rejected by NEW. The comparison
 * walks both schemas together (local $refs and allOf merged, compat-flatten.ts), applies the
 * keyword rules (compat-rules.ts) at each node, and decides finite value sets (enum, const,
 * booleans) exactly by running each old value through both schemas with bq's validator (ajv).
 */

export interface CompatResult {
  findings: CompatFinding[]
  /** A value OLD accepts and NEW rejects (checked with bq's validator), when one was found. */
  witness?: {value: unknown}
  breaking: number
  unproven: number
  warnings: number
}

export interface CompareOptions {
  /** Search a witness for a breaking or unproven verdict (default true). */
  witness?: boolean
}

export function compareSchemas(oldSchema: unknown, newSchema: unknown, options: CompareOptions = {}): CompatResult {
  for (const [side, root] of [['old', oldSchema], ['new', newSchema]] as const) {
    if (typeof root !== 'boolean' && (typeof root !== 'object' || root === null || Array.isArray(root))) throw new UsageError(`${side} schema is not a JSON Schema (an object, or true/false)`, 'registry')
    requireShallow(root, `${side} schema`)
    requireSupportedDraft(root, `${side} schema`)
    // Against draft-07's meta-schema (cheap: nothing is compiled but the meta-schema, once).
    const invalid = metaSchemaProblem(root, sharedAjv)
    if (invalid !== undefined) throw new UsageError(`${side} schema is not a valid JSON Schema: ${invalid}`, 'registry')
    const problem = refProblems(root)[0]
    if (problem) throw new UsageError(`${side} schema: ${problem.message} (at ${problem.pointer})`, 'registry')
  }
  const comparison = new Comparison(oldSchema, newSchema)
  try {
    comparison.compare({schema: oldSchema, pointer: ''}, {schema: newSchema, pointer: ''}, '$')
  } finally {
    comparison.release()
  }
  const findings = dedupe(comparison.findings)
  let witness: {value: unknown} | undefined
  if ((options.witness ?? true) && findings.some((f) => f.severity !== 'warning')) {
    witness = findWitness(oldSchema, newSchema)
    // A change compat could not prove, with a value it breaks: breaking.
    if (witness !== undefined && !findings.some((f) => f.severity === 'breaking')) {
      findings.push({severity: 'breaking', rule: 'witness.found', path: '$', schemaPath: '', side: 'new', message: `${preview(witness.value)} is valid under OLD and rejected by NEW`})
    }
  }
  return {
    ...(witness === undefined ? {} : {witness}),
    findings,
    breaking: findings.filter((f) => f.severity === 'breaking').length,
    unproven: findings.filter((f) => f.severity === 'unproven').length,
    warnings: findings.filter((f) => f.severity === 'warning').length,
  }
}

const ALL_TYPES: ReadonlySet<JsonType> = new Set(JSON_TYPES)

class Comparison implements CompareContext {
  findings: CompatFinding[] = []
  /** Pairs being compared further up: a recursive schema compares as compatible where it recurs. */
  private readonly active = new Set<string>()
  private readonly ids = new WeakMap<object, number>()
  private lastId = 0
  private keys: {old: string; next: string} | undefined

  constructor(private readonly oldRoot: unknown, private readonly newRoot: unknown) {}

  compare(old: Located, next: Located, path: string, options: SubCompare = {}): void {
    const domain = options.domain ?? ALL_TYPES
    if (old.schema === false) return
    // Identical sub-schemas accept the same data (their $refs followed: a definition may have changed).
    if (this.same(old.schema, next.schema)) return
    const key = `${this.keyOf(old)}|${this.keyOf(next)}|${[...domain].join(',')}`
    if (this.active.has(key)) return
    this.active.add(key)
    const start = this.findings.length
    try {
      this.compareFlat(old, flatten(old, this.oldRoot), flatten(next, this.newRoot), path, domain, options)
    } finally {
      this.active.delete(key)
    }
    if (options.unproven) for (const finding of this.findings.slice(start)) if (finding.severity === 'breaking') finding.severity = 'unproven'
  }

  probe(old: Located, next: Located, options: SubCompare = {}): CompatFinding[] {
    const kept = this.findings
    this.findings = []
    try {
      this.compare(old, next, '$', options)
      // Warnings count: a probe proves containment, and the open-object policy is not a proof.
      return this.findings
    } finally {
      this.findings = kept
    }
  }

  probeReversed(fromNew: Located, fromOld: Located): CompatFinding[] {
    // The documents swap places too, so $refs and the value checks look in the right one.
    return new Comparison(this.newRoot, this.oldRoot).probe(fromNew, fromOld)
  }

  report(finding: Omit<CompatFinding, 'side'> & {side?: 'old' | 'new'}): void {
    this.findings.push({...finding, side: finding.side ?? 'new'})
  }

  same(oldValue: unknown, newValue: unknown): boolean {
    return sameSchema(oldValue, this.oldRoot, newValue, this.newRoot)
  }

  typesOf(schema: Located, side: 'old' | 'new'): ReadonlySet<JsonType> {
    return admittedTypes(flatten(schema, side === 'old' ? this.oldRoot : this.newRoot), ALL_TYPES)
  }

  private compareFlat(oldLoc: Located, old: FlatSchema, next: FlatSchema, path: string, domain: ReadonlySet<JsonType>, options: SubCompare): void {
    if (old.never) return
    if (next.never) {
      const rule = options.falseRule ?? 'schema.false'
      this.report({severity: 'breaking', rule, path, schemaPath: next.origin.pointer ?? '', message: rule === 'property.removed' ? 'removed, and the object allows no other properties: data that carried it is now rejected' : 'nothing is valid here any more, and data was'})
      return
    }
    const oldTypes = admittedTypes(old, domain)
    if (oldTypes.size === 0) return
    // OLD is a choice of alternatives: OLD ⊆ NEW when each alternative (with the rest of OLD) is.
    for (const keyword of ['anyOf', 'oneOf']) {
      const branches = old.keywords.get(keyword)?.value
      if (Array.isArray(branches) && !Array.isArray(next.keywords.get(keyword)?.value)) {
        // The rest is OLD's merged keywords without this one (an unmerged residual is left out:
        // knowing less of OLD can only make the verdict more cautious), so each level of nested
        // alternatives is taken apart once.
        const rest = Object.fromEntries([...old.keywords].filter(([k]) => k !== keyword).map(([k, v]) => [k, v.value]))
        for (const branch of branches) this.compare({schema: {allOf: [rest, branch]}, pointer: null}, next.origin, path, {...options, domain})
        return
      }
    }
    const start = this.findings.length
    if (!this.finiteValues(old, next, path, oldTypes)) {
      const types = this.typeRule(old, next, path, oldTypes)
      const newValues = next.keywords.get('enum') ?? next.keywords.get('const')
      if (newValues !== undefined) {
        const rule = next.keywords.has('enum') ? 'enum.added' : 'const.added'
        this.report({severity: 'breaking', rule, path, schemaPath: newValues.pointer ?? '', message: `${rule.split('.')[0]} added: only ${JSON.stringify(newValues.value)} is accepted now, and other values were valid`})
      } else {
        const input: RuleInput = {ctx: this, old, next, path, types, formatType}
        stringRules(input)
        formatRule(input)
        numberRules(input)
        arrayRules(input)
        objectRules(input)
        combinatorRules(input)
      }
    }
    for (const branch of next.residual) this.compare(oldLoc, branch, path, {domain})
    // OLD constraints bq did not merge (a clashing allOf branch, if/then/else) may exclude the
    // data a rule thinks breaks: such a finding is not proven.
    if (old.residual.length > 0 || old.keywords.has('if')) {
      for (const finding of this.findings.slice(start)) if (finding.severity === 'breaking') finding.severity = 'unproven'
    }
  }

  /** NEW must allow every OLD type (an integer is a number); returns the types both allow. */
  private typeRule(old: FlatSchema, next: FlatSchema, path: string, oldTypes: ReadonlySet<JsonType>): Set<JsonType> {
    const newTypes = admittedTypes(next, ALL_TYPES)
    const kept = new Set<JsonType>()
    const lost: JsonType[] = []
    for (const type of oldTypes) {
      if (newTypes.has(type) || (type === 'integer' && newTypes.has('number'))) kept.add(type)
      else lost.push(type)
    }
    // A number that must now be an integer: the integers stay valid.
    if (lost.includes('number') && newTypes.has('integer')) kept.add('integer')
    if (lost.length > 0) {
      const declared = next.keywords.get('type')
      const rule = old.keywords.has('type') ? 'type.narrowed' : 'type.added'
      this.report({severity: 'breaking', rule, path, schemaPath: declared?.pointer ?? next.origin.pointer ?? '', message: `${lost.join(', ')} ${lost.length === 1 ? 'was' : 'were'} valid here; NEW accepts only ${[...newTypes].join(', ')}`})
    }
    return kept
  }

  /**
   * When OLD accepts only listed values (enum, const, booleans, null), each is run through both
   * schemas: the verdict is exact. False when OLD's values are not finite (or not checkable).
   */
  private finiteValues(old: FlatSchema, next: FlatSchema, path: string, oldTypes: ReadonlySet<JsonType>): boolean {
    let values: unknown[]
    if (old.keywords.has('const')) values = [old.keywords.get('const')!.value]
    else if (Array.isArray(old.keywords.get('enum')?.value)) values = old.keywords.get('enum')!.value as unknown[]
    else if ([...oldTypes].every((t) => t === 'null' || t === 'boolean')) values = [null, false, true]
    else return false
    values = values.filter((v) => oldTypes.has(typeOfValue(v)) || (typeOfValue(v) === 'integer' && oldTypes.has('number')))
    // enum/const/type alone are decided here; anything else is asked of bq's validator (ajv).
    const accepts = {old: simpleAccepts(old) ?? this.validator('old', old.origin), next: simpleAccepts(next) ?? this.validator('next', next.origin)}
    if (accepts.old === undefined || accepts.next === undefined) return false
    const rejected = values.filter((v) => accepts.old!(v) && !accepts.next!(v))
    if (rejected.length === 0) return true
    const shown = rejected.slice(0, 3).map((v) => JSON.stringify(v)).join(', ') + (rejected.length > 3 ? `, … (${rejected.length} values)` : '')
    const declared = next.keywords.get('enum') ?? next.keywords.get('const')
    const rule = next.keywords.has('enum') ? (old.keywords.has('enum') ? 'enum.narrowed' : 'enum.added') : next.keywords.has('const') ? (old.keywords.has('const') ? 'const.changed' : 'const.added') : 'value.rejected'
    this.report({severity: 'breaking', rule, path, schemaPath: declared?.pointer ?? next.origin.pointer ?? '', message: `${shown} ${rejected.length === 1 ? 'was' : 'were'} valid and ${rejected.length === 1 ? 'is' : 'are'} now rejected`})
    return true
  }

  /** The shared validator forgets this comparison's documents (and what it compiled from them). */
  release(): void {
    if (this.keys === undefined || this.keys.old === '') return
    for (const key of [this.keys.old, this.keys.next]) sharedAjv().removeSchema(key)
  }

  private validator(side: 'old' | 'next', located: Located): ((value: unknown) => boolean) | undefined {
    if (located.pointer === null) return undefined
    if (this.keys === undefined) {
      // One validator per process, each comparison's two documents added under keys of their own.
      const ajv = sharedAjv()
      const add = (root: unknown, key: string) => {
        const copy = typeof root === 'object' && root !== null ? {...(root as Record<string, unknown>)} : root
        if (typeof copy === 'object' && copy !== null) delete (copy as Record<string, unknown>).$id
        ajv.addSchema(copy as object, key)
        return key
      }
      const n = ++documents
      try {
        this.keys = {old: add(this.oldRoot, `bq-compat-old-${n}`), next: add(this.newRoot, `bq-compat-new-${n}`)}
      } catch {
        this.keys = {old: '', next: ''}
      }
    }
    if (this.keys.old === '') return undefined
    const fragment = located.pointer.split('/').map((s) => encodeURIComponent(s.replace(/~1/g, '/').replace(/~0/g, '~')).replace(/%2F/g, '~1')).join('/')
    try {
      const validate: ValidateFunction | undefined = sharedAjv().getSchema(`${this.keys[side]}#${fragment}`)
      return validate === undefined ? undefined : (value) => validate(value) as boolean
    } catch {
      return undefined
    }
  }


  private keyOf(located: Located): string {
    if (located.pointer !== null) return located.pointer
    if (typeof located.schema !== 'object' || located.schema === null) return String(located.schema)
    let id = this.ids.get(located.schema)
    if (id === undefined) this.ids.set(located.schema, (id = ++this.lastId))
    return `#${id}`
  }
}

let ajv: Ajv | undefined
let documents = 0
const sharedAjv = (): Ajv => (ajv ??= newAjv({allErrors: false, messages: false, code: {optimize: false}}))

/** The instance type ajv checks a format on; undefined for a format it does not know (ignored: an annotation). */
function formatType(name: string): 'string' | 'number' | undefined {
  const formats = (sharedAjv() as unknown as {formats: Record<string, unknown>}).formats ?? {}
  if (!Object.hasOwn(formats, name)) return undefined
  const definition = formats[name]
  if (typeof definition === 'object' && definition !== null && !(definition instanceof RegExp) && (definition as {type?: unknown}).type === 'number') return 'number'
  return 'string'
}

const SIMPLE = new Set(['enum', 'const', 'type'])

/** Whether a value is valid, for a schema of nothing but enum, const and type; undefined for any other. */
function simpleAccepts(flat: FlatSchema): ((value: unknown) => boolean) | undefined {
  if (flat.residual.length > 0 || [...flat.keywords.keys()].some((k) => !SIMPLE.has(k))) return undefined
  const declared = flat.keywords.get('type')?.value
  const types = admittedTypes({...flat, keywords: new Map(declared === undefined ? [] : [['type', {value: declared, pointer: null}]])}, ALL_TYPES)
  const constant = flat.keywords.get('const')
  const values = flat.keywords.get('enum')?.value
  if (values !== undefined && !Array.isArray(values)) return undefined
  // A set of canonical texts: a large enum is looked up, not scanned (30,000 values, each checked).
  const listed = values === undefined ? undefined : new Set(values.map(canonical))
  return (value) => {
    const type = typeOfValue(value)
    if (!types.has(type) && !(type === 'integer' && types.has('number'))) return false
    if (constant !== undefined && !deepEqual(constant.value, value)) return false
    return listed === undefined || listed.has(canonical(value))
  }
}

/** The instance types a flattened schema can accept, within `domain`. */
export function admittedTypes(flat: FlatSchema, domain: ReadonlySet<JsonType>): Set<JsonType> {
  if (flat.never) return new Set()
  let types = new Set<JsonType>(domain)
  const declared = flat.keywords.get('type')?.value
  if (declared !== undefined) {
    const list = (Array.isArray(declared) ? declared : [declared]).filter((t): t is JsonType => (JSON_TYPES as readonly string[]).includes(t as string))
    const allowed = new Set<JsonType>(list)
    if (allowed.has('number')) allowed.add('integer')
    types = new Set([...types].filter((t) => allowed.has(t)))
  }
  const values = flat.keywords.has('const') ? [flat.keywords.get('const')!.value] : flat.keywords.get('enum')?.value
  if (Array.isArray(values)) {
    const fromValues = new Set(values.map(typeOfValue))
    types = new Set([...types].filter((t) => fromValues.has(t) || (t === 'number' && fromValues.has('integer'))))
  }
  return types
}

function typeOfValue(value: unknown): JsonType {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  if (typeof value === 'boolean') return 'boolean'
  if (typeof value === 'string') return 'string'
  return 'object'
}

/** A value as one short line of JSON. */
export function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 200 ? `${text.slice(0, 200)}…` : text
}

function dedupe(findings: CompatFinding[]): CompatFinding[] {
  const seen = new Set<string>()
  return findings.filter((f) => {
    const key = `${f.severity}|${f.rule}|${f.path}|${f.side}|${f.schemaPath}`
    if (seen.has(key)) return false
    seen.add(key)
    return true
  })
}
