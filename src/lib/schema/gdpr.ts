import {PersonalNameMatcher} from './personal-data-names.js'
import type {PersonalNameRules} from './personal-data-names.js'
import {isSchemaObject, resolveRef} from './refs.js'
import {sensitiveFieldName, sensitivePathsOf} from './sensitive.js'

/**
 * `bq schema gdpr`: the personal-data inventory of a registry (the `x-gdpr-sensitive` paths of
 * each URN, read by the same code that masks peek's output, sensitive.ts), and the `--require`
 * audit: every property whose name looks like personal data (personal-data-names.ts) must be
 * annotated, or sit inside an annotated value, or be marked `"x-gdpr-sensitive": false`.
 */

export interface SensitiveField {
  field: string
  category: string
}

export function inventory(schema: unknown): SensitiveField[] {
  return sensitivePathsOf(schema).map((s) => ({field: sensitiveFieldName(s), category: s.category}))
}

export interface UnannotatedField {
  field: string
  /** The listed personal-data name it matched. */
  matched: string
  /** Where the property is declared in the schema file (a JSON pointer). */
  pointer: string
}

/** The registry's own additions to the name list (`"gdpr"` in registry.json). */
export function nameRulesOf(manifest: Record<string, unknown>): PersonalNameRules {
  const gdpr = manifest.gdpr
  if (!isSchemaObject(gdpr)) return {}
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : undefined)
  return {extra: strings(gdpr.personal_data_names), removed: strings(gdpr.not_personal_data_names)}
}

/** The properties that look like personal data and are not annotated. */
export function unannotated(schema: unknown, matcher: PersonalNameMatcher): UnannotatedField[] {
  const found = new Map<string, UnannotatedField>()
  const visiting = new Set<unknown>()
  // `covered`: an ancestor is annotated (the whole value is personal data, masked as one).
  const visit = (node: unknown, path: string[], pointer: string, covered: boolean): boolean => {
    if (!isSchemaObject(node) || visiting.has(node)) return false
    visiting.add(node)
    try {
      const marker = node['x-gdpr-sensitive']
      const annotated = marker === true || (typeof marker === 'string' && marker !== '')
      let below = false
      if (typeof node.$ref === 'string' && node.$ref.startsWith('#')) below = visit(resolveRef(schema, node.$ref), path, node.$ref.slice(1), covered || annotated) || below
      for (const keyword of ['allOf', 'anyOf', 'oneOf']) {
        const list = node[keyword]
        if (Array.isArray(list)) list.forEach((sub, i) => (below = visit(sub, path, `${pointer}/${keyword}/${i}`, covered || annotated) || below))
      }
      if (isSchemaObject(node.properties)) {
        for (const [name, sub] of Object.entries(node.properties)) {
          const at = `${pointer}/properties/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`
          const child = [...path, name]
          const childMarker = isSchemaObject(sub) ? sub['x-gdpr-sensitive'] : undefined
          const inner = visit(sub, child, at, covered || annotated)
          below = below || inner || (childMarker !== undefined && childMarker !== false && childMarker !== '')
          const reviewed = childMarker !== undefined
          const matched = matcher.match(name)
          // A container with annotated fields inside it was reviewed field by field.
          if (matched !== undefined && !covered && !annotated && !reviewed && !inner) {
            const field = sensitiveFieldName({path: child, category: ''})
            if (!found.has(field)) found.set(field, {field, matched, pointer: at})
          }
        }
      }
      const items = node.items
      if (Array.isArray(items)) items.forEach((sub, i) => (below = visit(sub, [...path, '*'], `${pointer}/items/${i}`, covered || annotated) || below))
      else if (items !== undefined) below = visit(items, [...path, '*'], `${pointer}/items`, covered || annotated) || below
      return below || annotated
    } finally {
      visiting.delete(node)
    }
  }
  visit(schema, [], '', false)
  return [...found.values()]
}
