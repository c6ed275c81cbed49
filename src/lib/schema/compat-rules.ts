import {childPath} from '../envelope/validate.js'
import type {FlatSchema} from './compat-flatten.js'
import {isAnnotation} from './compat-flatten.js'
import type {CompareContext, CompatFinding, JsonType, Located} from './compat-types.js'
import {isSchemaObject} from './refs.js'
import {linearRegExp} from '../linear-regexp.js'

/**
 * The keyword rules of `bq schema compat`, one function per kind of instance. Each asks: can a
 * value that OLD accepts be rejected by NEW because of this keyword? The direction is always
 * "OLD ⊆ NEW"; a keyword NEW drops or loosens never breaks anything. notes/wt-schema.md lists
 * every rule by name.
 */

export interface RuleInput {
  ctx: CompareContext
  old: FlatSchema
  next: FlatSchema
  path: string
  /** The instance types both schemas admit (type changes are reported before the rules run). */
  types: ReadonlySet<JsonType>
  /** The instance type ajv checks a format on ('string' or 'number'); undefined for a format ajv does not know (an annotation). */
  formatType(name: string): 'string' | 'number' | undefined
}

const value = (flat: FlatSchema, key: string): unknown => flat.keywords.get(key)?.value
const where = (flat: FlatSchema, key: string): string => flat.keywords.get(key)?.pointer ?? flat.origin.pointer ?? ''
const num = (flat: FlatSchema, key: string): number | undefined => {
  const v = value(flat, key)
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined
}
const show = (v: unknown): string => JSON.stringify(v)

/** A lower or upper limit of a count (minLength, maxItems, …): NEW may not be tighter. */
function countLimit(input: RuleInput, key: string, direction: 'min' | 'max', unit: string): void {
  const {old, next, ctx, path} = input
  const n = num(next, key)
  if (n === undefined) return
  const o = num(old, key)
  const tighter = direction === 'min' ? n > (o ?? 0) : n < (o ?? Number.POSITIVE_INFINITY)
  if (!tighter) return
  const change = o === undefined ? 'added' : direction === 'min' ? 'raised' : 'lowered'
  const was = o === undefined ? (direction === 'min' ? 'no lower limit' : 'no upper limit') : `${key} ${o}`
  ctx.report({severity: 'breaking', rule: `${key}.${change}`, path, schemaPath: where(next, key), message: `${key} ${n} (was ${was}): ${direction === 'min' ? 'fewer' : 'more'} ${unit} than ${n} were valid and are now rejected`})
}

export function stringRules(input: RuleInput): void {
  if (!input.types.has('string')) return
  const {old, next, ctx, path} = input
  countLimit(input, 'minLength', 'min', 'characters')
  countLimit(input, 'maxLength', 'max', 'characters')
  const np = value(next, 'pattern')
  const op = value(old, 'pattern')
  // Any pattern added is a constraint: even "^$" or "^.*$" (which rejects "a\nb") rejects strings.
  if (typeof np === 'string' && np !== op) {
    if (op === undefined) ctx.report({severity: 'breaking', rule: 'pattern.added', path, schemaPath: where(next, 'pattern'), message: `pattern ${show(np)} added: strings that do not match it were valid and are now rejected`})
    else ctx.report({severity: 'unproven', rule: 'pattern.changed', path, schemaPath: where(next, 'pattern'), message: `pattern changed from ${show(op)} to ${show(np)}: cannot prove every string matching the old one matches the new one`})
  }
}

/** `format`, on the type ajv checks it on: strings (email, uri…) or numbers (int32, int64, float, double). */
export function formatRule(input: RuleInput): void {
  const {old, next, ctx, path, types} = input
  const nf = value(next, 'format')
  const of = value(old, 'format')
  if (typeof nf !== 'string' || nf === of) return
  const checkedOn = input.formatType(nf)
  if (checkedOn === undefined) return
  const applies = checkedOn === 'string' ? types.has('string') : types.has('number') || types.has('integer')
  if (!applies) return
  const what = checkedOn === 'string' ? 'strings' : 'numbers'
  if (typeof of !== 'string' || input.formatType(of) !== checkedOn) ctx.report({severity: 'breaking', rule: 'format.added', path, schemaPath: where(next, 'format'), message: `format ${show(nf)} added: ${what} that are not a ${nf} were valid and are now rejected`})
  else ctx.report({severity: 'unproven', rule: 'format.changed', path, schemaPath: where(next, 'format'), message: `format changed from ${show(of)} to ${show(nf)}: cannot prove every ${of} is a ${nf}`})
}

interface Bound {
  value: number
  exclusive: boolean
  keyword: string
}

/** The tightest lower (or upper) bound of a number, from minimum/exclusiveMinimum (maximum/exclusiveMaximum). */
function bound(flat: FlatSchema, side: 'lower' | 'upper', integersOnly: boolean): Bound | undefined {
  const [inclusiveKey, exclusiveKey] = side === 'lower' ? ['minimum', 'exclusiveMinimum'] : ['maximum', 'exclusiveMaximum']
  const candidates: Bound[] = []
  const inclusive = num(flat, inclusiveKey)
  const exclusive = num(flat, exclusiveKey)
  if (inclusive !== undefined) candidates.push({value: inclusive, exclusive: false, keyword: inclusiveKey})
  if (exclusive !== undefined) candidates.push({value: exclusive, exclusive: true, keyword: exclusiveKey})
  // Over the integers an exclusive bound is an inclusive one: exclusiveMinimum 0 is minimum 1.
  const normal = candidates.map((b) => {
    if (!integersOnly) return b
    if (side === 'lower') return {...b, value: b.exclusive ? Math.floor(b.value) + 1 : Math.ceil(b.value), exclusive: false}
    return {...b, value: b.exclusive ? Math.ceil(b.value) - 1 : Math.floor(b.value), exclusive: false}
  })
  const tighter = (a: Bound, b: Bound) => (side === 'lower' ? a.value > b.value : a.value < b.value) || (a.value === b.value && a.exclusive && !b.exclusive)
  return normal.reduce<Bound | undefined>((best, b) => (best === undefined || tighter(b, best) ? b : best), undefined)
}

export function numberRules(input: RuleInput): void {
  const {old, next, ctx, path, types} = input
  if (!types.has('number') && !types.has('integer')) return
  const integersOnly = !types.has('number')
  for (const side of ['lower', 'upper'] as const) {
    const n = bound(next, side, integersOnly)
    if (n === undefined) continue
    const o = bound(old, side, integersOnly)
    const stricter = o === undefined || (side === 'lower' ? n.value > o.value : n.value < o.value) || (n.value === o.value && n.exclusive && !o.exclusive)
    if (!stricter) continue
    const change = o === undefined ? 'added' : side === 'lower' ? 'raised' : 'lowered'
    const was = o === undefined ? `no ${side} bound` : `${o.keyword} ${o.value}`
    ctx.report({severity: 'breaking', rule: `${n.keyword}.${change}`, path, schemaPath: where(next, n.keyword), message: `${n.keyword} ${value(next, n.keyword)} (was ${was}): numbers ${side === 'lower' ? 'below' : 'above'} it that were valid are now rejected`})
  }
  multipleOfRule(input, integersOnly)
}

/**
 * multipleOf as ajv decides it: x / m must be an integer by floating-point division and parseInt,
 * so 0.3 is not a multiple of 0.1 and 1e21 is not a multiple of 1. Only an unchanged multipleOf
 * is proven; a changed one breaks when OLD's own step is rejected, and is unproven otherwise.
 */
function multipleOfRule(input: RuleInput, integersOnly: boolean): void {
  const {old, next, ctx, path} = input
  const nm = num(next, 'multipleOf')
  if (nm === undefined || nm <= 0) return
  const om = num(old, 'multipleOf')
  if (om === nm) return
  const schemaPath = where(next, 'multipleOf')
  if (om === undefined) {
    if (integersOnly) ctx.report({severity: 'unproven', rule: 'multipleOf.added', path, schemaPath, message: `multipleOf ${nm} added on integers: the validator divides in floating point, and rejects large integers (1e21) even for multipleOf 1`})
    else ctx.report({severity: 'breaking', rule: 'multipleOf.added', path, schemaPath, message: `multipleOf ${nm} added: numbers that are not multiples of ${nm} were valid and are now rejected`})
    return
  }
  if (!ajvMultiple(om, nm)) ctx.report({severity: 'breaking', rule: 'multipleOf.changed', path, schemaPath, message: `multipleOf ${nm} (was ${om}): ${om} was valid and is not a multiple of ${nm} for the validator`})
  else ctx.report({severity: 'unproven', rule: 'multipleOf.changed', path, schemaPath, message: `multipleOf ${nm} (was ${om}): the validator divides in floating point, so a multiple of ${om} is not proven a multiple of ${nm}`})
}

/** ajv's multipleOf test as its validation vocabulary generates it (no multipleOfPrecision). */
export const ajvMultiple = (x: number, m: number): boolean => {
  const q = x / m
  return q === Number.parseInt(String(q), 10)
}

/** The schema of array position `i` (a tuple's item, its additionalItems, or the one items schema). */
function itemAt(flat: FlatSchema, i: number | 'rest'): Located {
  const items = flat.keywords.get('items')
  if (Array.isArray(items?.value)) {
    if (i !== 'rest' && i < items.value.length) return {schema: items.value[i], pointer: items.pointer === null ? null : `${items.pointer}/${i}`}
    const extra = flat.keywords.get('additionalItems')
    return {schema: extra?.value ?? true, pointer: extra?.pointer ?? null}
  }
  return {schema: items?.value ?? true, pointer: items?.pointer ?? null}
}

export function arrayRules(input: RuleInput): void {
  if (!input.types.has('array')) return
  const {old, next, ctx, path} = input
  countLimit(input, 'minItems', 'min', 'items')
  countLimit(input, 'maxItems', 'max', 'items')
  if (value(next, 'uniqueItems') === true && value(old, 'uniqueItems') !== true) {
    ctx.report({severity: 'breaking', rule: 'uniqueItems.added', path, schemaPath: where(next, 'uniqueItems'), message: 'uniqueItems added: arrays with repeated items were valid and are now rejected'})
  }
  const tupleLength = (flat: FlatSchema) => {
    const items = value(flat, 'items')
    return Array.isArray(items) ? items.length : 0
  }
  const newTuple = tupleLength(next)
  const positions = Math.max(tupleLength(old), newTuple)
  for (let i = 0; i < positions; i++) {
    ctx.compare(itemAt(old, i), itemAt(next, i), childPath(path, i), {falseRule: i < newTuple ? 'items.closed' : 'additionalItems.closed'})
  }
  ctx.compare(itemAt(old, 'rest'), itemAt(next, 'rest'), `${path}[*]`, {falseRule: newTuple > 0 ? 'additionalItems.closed' : 'items.closed'})
  const nc = next.keywords.get('contains')
  if (nc !== undefined) {
    const oc = old.keywords.get('contains')
    if (oc === undefined) ctx.report({severity: 'breaking', rule: 'contains.added', path, schemaPath: where(next, 'contains'), message: 'contains added: arrays without a matching item were valid and are now rejected'})
    else if (ctx.probe({schema: oc.value, pointer: oc.pointer}, {schema: nc.value, pointer: nc.pointer}).length > 0) {
      ctx.report({severity: 'unproven', rule: 'contains.changed', path, schemaPath: where(next, 'contains'), message: 'contains changed: cannot prove an item matching the old contains matches the new one'})
    }
  }
}

/** The schemas that apply to property `name`: its own, the matching patternProperties, else additionalProperties. */
function propertySchemas(flat: FlatSchema, name: string): Located[] {
  const found: Located[] = []
  const props = flat.keywords.get('properties')
  if (isSchemaObject(props?.value) && Object.hasOwn(props.value, name)) found.push({schema: props.value[name], pointer: props.pointer === null ? null : `${props.pointer}/${escape(name)}`})
  const patterns = flat.keywords.get('patternProperties')
  if (isSchemaObject(patterns?.value)) {
    for (const [source, schema] of Object.entries(patterns.value)) if (matches(source, name)) found.push({schema, pointer: patterns.pointer === null ? null : `${patterns.pointer}/${escape(source)}`})
  }
  if (found.length === 0) found.push(additional(flat))
  return found
}

function additional(flat: FlatSchema): Located {
  const extra = flat.keywords.get('additionalProperties')
  return {schema: extra?.value ?? true, pointer: extra?.pointer ?? null}
}

export function objectRules(input: RuleInput): void {
  if (!input.types.has('object')) return
  const {old, next, ctx, path} = input
  const oldRequired = new Set(stringList(value(old, 'required')))
  stringList(value(next, 'required')).forEach((name, i) => {
    if (oldRequired.has(name)) return
    const pointer = next.keywords.get('required')?.pointer
    ctx.report({severity: 'breaking', rule: 'required.added', path: childPath(path, name), schemaPath: pointer ? `${pointer}/${i}` : '', message: `"${name}" is now required: data without it was valid and is now rejected`})
  })
  const oldProps = objectOf(value(old, 'properties'))
  const newProps = objectOf(value(next, 'properties'))
  const oldOpen = isTrivial(additional(old).schema) && Object.keys(objectOf(value(old, 'patternProperties'))).length === 0
  for (const name of new Set([...Object.keys(oldProps), ...Object.keys(newProps)])) {
    const before = propertySchemas(old, name)
    const after = propertySchemas(next, name)
    const at = childPath(path, name)
    const falseRule = Object.hasOwn(newProps, name) ? 'property.forbidden' : Object.hasOwn(oldProps, name) ? 'property.removed' : 'additionalProperties.closed'
    if (!Object.hasOwn(oldProps, name) && oldOpen && Object.hasOwn(newProps, name)) {
      // An optional field added to an open object: data that already carried the name with
      // another value would now be rejected. Compatible by the registry's policy, but said.
      const findings = after.flatMap((n) => ctx.probe({schema: true, pointer: null}, n))
      if (findings.length > 0) ctx.report({severity: 'warning', rule: 'property.added-open', path: at, schemaPath: after[0].pointer ?? '', message: `"${name}" added to an object that allowed any other property: data that already carried "${name}" must now match its schema (${findings[0].rule})`})
      continue
    }
    for (const n of after) {
      if (before.length === 1 || !before.some((o) => ctx.probe(o, n).length === 0)) ctx.compare(before[0], n, at, {falseRule})
    }
  }
  const oldPatterns = objectOf(value(old, 'patternProperties'))
  const newPatterns = objectOf(value(next, 'patternProperties'))
  const newPatternsAt = next.keywords.get('patternProperties')?.pointer ?? null
  const oldPatternsAt = old.keywords.get('patternProperties')?.pointer ?? null
  const others = `${path}.*`
  const oldAt = (source: string): Located => ({schema: oldPatterns[source], pointer: oldPatternsAt && `${oldPatternsAt}/${escape(source)}`})
  const newAt = (source: string): Located => ({schema: newPatterns[source], pointer: newPatternsAt && `${newPatternsAt}/${escape(source)}`})
  // Which names a rewritten pattern shares with the others is not computed: when both sides have
  // patterns and their sources differ, each pairing that may apply is compared, and a finding
  // from it is unproven (the names concerned may not exist).
  const rewritten = Object.keys(oldPatterns).length > 0 && Object.keys(newPatterns).length > 0 && !sameKeys(oldPatterns, newPatterns)
  for (const source of Object.keys(newPatterns)) {
    if (Object.hasOwn(oldPatterns, source)) {
      ctx.compare(oldAt(source), newAt(source), others, {falseRule: 'patternProperties.closed'})
      continue
    }
    ctx.compare(additional(old), newAt(source), others, {falseRule: 'patternProperties.closed', unproven: rewritten})
    if (rewritten) for (const was of Object.keys(oldPatterns)) ctx.compare(oldAt(was), newAt(source), others, {falseRule: 'patternProperties.closed', unproven: true})
  }
  for (const source of Object.keys(oldPatterns)) {
    if (Object.hasOwn(newPatterns, source)) continue
    ctx.compare(oldAt(source), additional(next), others, {falseRule: 'additionalProperties.closed', unproven: rewritten})
  }
  ctx.compare(additional(old), additional(next), others, {falseRule: 'additionalProperties.closed'})
  countLimit(input, 'minProperties', 'min', 'properties')
  countLimit(input, 'maxProperties', 'max', 'properties')
  const names = next.keywords.get('propertyNames')
  if (names !== undefined) {
    const before = old.keywords.get('propertyNames')
    ctx.compare({schema: before?.value ?? true, pointer: before?.pointer ?? null}, {schema: names.value, pointer: names.pointer}, path, {domain: new Set(['string'])})
  }
  dependencyRules(input)
}

function dependencyRules({old, next, ctx, path}: RuleInput): void {
  const deps = next.keywords.get('dependencies')
  if (!isSchemaObject(deps?.value)) return
  const before = objectOf(value(old, 'dependencies'))
  for (const [name, dep] of Object.entries(deps.value)) {
    const pointer = deps.pointer === null ? '' : `${deps.pointer}/${escape(name)}`
    const was = before[name]
    if (Array.isArray(dep)) {
      const had = new Set(Array.isArray(was) ? was : [])
      const added = dep.filter((d) => !had.has(d))
      if (added.length > 0) ctx.report({severity: 'breaking', rule: 'dependencies.added', path, schemaPath: pointer, message: `with "${name}" present, ${added.map((d) => `"${d}"`).join(', ')} ${added.length === 1 ? 'is' : 'are'} now required too`})
    } else {
      // A schema dependency applies to the whole object when the property is present.
      ctx.compare({schema: isSchemaObject(was) || typeof was === 'boolean' ? was : true, pointer: null}, {schema: dep, pointer}, path)
    }
  }
}

export function combinatorRules(input: RuleInput): void {
  const {old, next, ctx, path} = input
  for (const keyword of ['anyOf', 'oneOf'] as const) {
    const after = next.keywords.get(keyword)
    if (!Array.isArray(after?.value)) continue
    const branches: Located[] = after.value.map((schema, i) => ({schema, pointer: after.pointer === null ? null : `${after.pointer}/${i}`}))
    const before = old.keywords.get(keyword)
    if (Array.isArray(before?.value)) {
      const oldBranches: Located[] = before.value.map((schema, i) => ({schema, pointer: before.pointer === null ? null : `${before.pointer}/${i}`}))
      const matched = new Set<number>()
      oldBranches.forEach((branch, i) => {
        // The same position first, then any branch: reordering is compatible.
        const order = [i, ...branches.keys()].filter((j, k, all) => j < branches.length && all.indexOf(j) === k)
        const j = order.find((candidate) => ctx.probe(branch, branches[candidate]).length === 0)
        if (j !== undefined) {
          matched.add(j)
          return
        }
        // Covered but for the open-object policy (an optional property added): a warning, as at the top.
        const lenient = order.find((candidate) => onlyWarnings(ctx.probe(branch, branches[candidate])))
        if (lenient !== undefined) {
          matched.add(lenient)
          ctx.report({severity: 'warning', rule: `${keyword}.branch-narrowed`, path, schemaPath: branches[lenient].pointer ?? '', message: `${keyword} branch ${lenient} accepts what branch ${i} did, except data that already carried a property it now declares (${ctx.probe(branch, branches[lenient])[0].rule})`})
          return
        }
        if (i < branches.length) {
          const why = ctx.probe(branch, branches[i])[0]
          ctx.report({severity: 'breaking', rule: `${keyword}.branch-narrowed`, path, schemaPath: branches[i].pointer ?? '', message: `${keyword} branch ${i} narrowed and no other branch accepts what it accepted (${why.rule} at ${why.path}: ${why.message})`})
        } else {
          ctx.report({severity: 'breaking', rule: `${keyword}.branch-removed`, path, side: 'old', schemaPath: branch.pointer ?? '', message: `${keyword} branch ${i} removed and no remaining branch accepts what it accepted`})
        }
      })
      if (keyword === 'oneOf' && !ctx.same(before.value, after.value)) {
        // oneOf wants exactly one match: once the list changed (a branch added, widened, repeated,
        // or a $ref'd definition behind one changed), overlapping branches are not proven apart.
        branches.forEach((branch, j) => {
          if (!overlapsOthers(ctx, branches, j)) return
          const rule = !matched.has(j) ? 'oneOf.branch-added' : oldBranches.some((o, i) => i === j && ctx.same(o.schema, branch.schema)) ? 'oneOf.branch-overlaps' : 'oneOf.branch-widened'
          ctx.report({severity: 'unproven', rule, path, schemaPath: branch.pointer ?? '', message: `oneOf branch ${j} ${rule === 'oneOf.branch-added' ? 'added' : rule === 'oneOf.branch-widened' ? 'widened' : 'kept'}: it may overlap another branch, and a value matching two branches is rejected`})
        })
      }
      continue
    }
    // Added: for each kind of value OLD accepts, one branch must accept all of it.
    const verdicts = [...input.types].map((type) => ({type, found: branches.map((b) => ctx.probe(old.origin, b, {domain: new Set([type])}))}))
    const uncovered = verdicts.filter((v) => !v.found.some((f) => f.length === 0 || onlyWarnings(f))).map((v) => v.type)
    const lenient = verdicts.filter((v) => !v.found.some((f) => f.length === 0) && v.found.some((f) => onlyWarnings(f))).map((v) => v.type)
    if (uncovered.length === 0 && lenient.length > 0) {
      ctx.report({severity: 'warning', rule: `${keyword}.added`, path, schemaPath: after.pointer ?? '', message: `${keyword} added: its branches accept every ${lenient.join(' / ')} value that was valid, except data that already carried a property a branch now declares`})
    }
    if (uncovered.length > 0) {
      ctx.report({severity: 'breaking', rule: `${keyword}.added`, path, schemaPath: after.pointer ?? '', message: `${keyword} added: no branch accepts every ${uncovered.join(' / ')} value that was valid`})
    } else if (keyword === 'oneOf' && branches.some((_, j) => overlapsOthers(ctx, branches, j))) {
      ctx.report({severity: 'unproven', rule: 'oneOf.added', path, schemaPath: after.pointer ?? '', message: 'oneOf added: its branches accept the same kinds of value, so cannot prove no valid value matches two of them'})
    }
  }
  notRule(input)
  const conditional = ['if', 'then', 'else'].filter((k) => next.keywords.has(k) && !ctx.same(value(old, k), value(next, k)))
  if (conditional.length > 0 && next.keywords.has('if')) {
    ctx.report({severity: 'unproven', rule: 'if.changed', path, schemaPath: where(next, conditional[0]), message: `${conditional.join('/')} added or changed: conditional schemas are not compared`})
  }
}

/** Findings that are all warnings (and some): covered but for the open-object policy. */
const onlyWarnings = (findings: CompatFinding[]): boolean => findings.length > 0 && findings.every((f) => f.severity === 'warning')

/** Whether branch `j` can accept a kind of value (a JSON type) another branch accepts too. */
function overlapsOthers(ctx: CompareContext, branches: Located[], j: number): boolean {
  const mine = ctx.typesOf(branches[j], 'new')
  return branches.some((other, k) => {
    if (k === j) return false
    const theirs = ctx.typesOf(other, 'new')
    return [...mine].some((t) => theirs.has(t) || (t === 'integer' && theirs.has('number')) || (t === 'number' && theirs.has('integer')))
  })
}

function notRule({old, next, ctx, path, types}: RuleInput): void {
  const after = next.keywords.get('not')
  if (after === undefined) return
  const before = old.keywords.get('not')
  if (before !== undefined) {
    if (ctx.same(before.value, after.value)) return
    // OLD excludes B, NEW excludes A: fine when everything A matches, B matched too (A ⊆ B).
    if (ctx.probeReversed({schema: after.value, pointer: after.pointer}, {schema: before.value, pointer: before.pointer}).length === 0) return
    ctx.report({severity: 'unproven', rule: 'not.changed', path, schemaPath: where(next, 'not'), message: 'not changed: cannot prove the new excluded values were excluded before'})
    return
  }
  // A `not` that only excludes kinds of value OLD never accepted changes nothing.
  const matched = ctx.typesOf({schema: after.value, pointer: after.pointer}, 'new')
  const excluded = [...types].filter((type) => matched.has(type) || (type === 'integer' && matched.has('number')))
  if (excluded.length > 0) ctx.report({severity: 'breaking', rule: 'not.added', path, schemaPath: where(next, 'not'), message: `not added: ${excluded.join(' / ')} values it matches were valid and are now rejected`})
}

/** `true`, or a schema of annotations only (`{}`, `{"description": …}`): it accepts everything. */
const isTrivial = (schema: unknown): boolean => schema === true || (isSchemaObject(schema) && Object.keys(schema).every(isAnnotation))
const stringList = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [])
const objectOf = (v: unknown): Record<string, unknown> => (isSchemaObject(v) ? v : {})
const sameKeys = (a: object, b: object): boolean => Object.keys(a).length === Object.keys(b).length && Object.keys(a).every((k) => Object.hasOwn(b, k))
const escape = (key: string) => key.replace(/~/g, '~0').replace(/\//g, '~1')

function matches(source: string, name: string): boolean {
  try {
    return linearRegExp(source, 'u').test(name)
  } catch {
    return false
  }
}
