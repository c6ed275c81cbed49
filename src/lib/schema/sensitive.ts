/**
 * The personal-data fields a per-URN `data` schema declares with `x-gdpr-sensitive` (`true` or a
 * category string such as "email"; spec-gdpr-field-encryption.md). A path is a list of object
 * keys, with `*` standing for every item of an array. Followed: `properties`, `items` (one schema
 * or a list), `allOf`/`anyOf`/`oneOf`, and local `$ref`s (`#/definitions/…`, `#/$defs/…`).
 */
import {isSchemaObject, resolveRef} from './refs.js'

export interface SensitivePath {
  path: string[]
  /** The declared category; "personal" where the keyword is `true`. */
  category: string
}

const isSchema = isSchemaObject

export function sensitivePathsOf(root: unknown): SensitivePath[] {
  const found: SensitivePath[] = []
  const seen = new Set<string>()
  // Iterative walk (a queue); `visiting` guards against $ref cycles along one path.
  const work: Array<{schema: unknown; path: string[]; visiting: Set<unknown>}> = [{schema: root, path: [], visiting: new Set()}]
  // Breadth first, so the paths come out in the schema's order, shallow ones first.
  for (let next = 0; next < work.length; next++) {
    const {schema, path, visiting} = work[next]
    if (!isSchema(schema) || visiting.has(schema)) continue
    const inside = new Set(visiting).add(schema)
    const marker = schema['x-gdpr-sensitive']
    if (path.length > 0 && (marker === true || (typeof marker === 'string' && marker !== ''))) {
      const key = path.join('\u0000')
      if (!seen.has(key)) {
        seen.add(key)
        found.push({path, category: marker === true ? 'personal' : marker})
      }
      // The whole value is masked: nothing below it needs a path of its own.
      continue
    }
    if (typeof schema.$ref === 'string') work.push({schema: resolveRef(root, schema.$ref), path, visiting: inside})
    for (const keyword of ['allOf', 'anyOf', 'oneOf']) {
      const list = schema[keyword]
      if (Array.isArray(list)) for (const sub of list) work.push({schema: sub, path, visiting: inside})
    }
    if (isSchema(schema.properties)) {
      for (const [name, sub] of Object.entries(schema.properties)) work.push({schema: sub, path: [...path, name], visiting: inside})
    }
    const items = schema.items
    if (Array.isArray(items)) for (const sub of items) work.push({schema: sub, path: [...path, '*'], visiting: inside})
    else if (items !== undefined) work.push({schema: items, path: [...path, '*'], visiting: inside})
  }
  return found
}

/** A sensitive path as bq names a field: `data.email`, `data.addresses[*].line`. */
export function sensitiveFieldName(sensitive: SensitivePath): string {
  return ['data', ...sensitive.path].join('.').replaceAll('.*', '[*]')
}
