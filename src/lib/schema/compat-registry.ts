import {dirname, posix, relative} from 'node:path'

import {compareSchemas} from './compat.js'
import type {CompatResult} from './compat.js'
import {GitFiles} from './git-files.js'
import {parseJsonText, readManifest} from './manifest.js'

/**
 * `bq schema compat --registry R --against REF`: every URN of the registry compared with its
 * schema at a git ref. A URN whose schema breaks (or that is gone) gets the URN to mint instead.
 */

export interface UrnCompat {
  urn: string
  status: 'added' | 'removed' | 'unchanged' | 'changed'
  /** The schema file now (relative to the current directory), or at the ref for a removed URN. */
  file?: string
  result?: CompatResult
  /** The URN to publish the new shape under: `…:created.v2`, `.v2` → `.v3`. */
  suggestedUrn?: string
  /** The new schema's text, for line numbers. */
  text?: string
}

export interface RegistryCompat {
  registry: string
  against: string
  urns: UrnCompat[]
  /** The schemas that compat compared (old and new), by URN: the sample check needs them. */
  schemas: Map<string, {old?: unknown; next?: unknown}>
  warnings: string[]
}

export async function compareRegistryAgainst(registryPath: string, ref: string): Promise<RegistryCompat> {
  const manifest = readManifest(registryPath, {confined: true})
  const folder = dirname(manifest.path)
  const git = await GitFiles.open(folder, ref)
  const registryName = posix.basename(manifest.path)
  const [oldManifestText] = [...(await git.read([registryName])).values()]
  const warnings: string[] = []
  const oldEntries = new Map<string, {file?: string; schema?: unknown; text?: string}>()
  if (oldManifestText === undefined) {
    warnings.push(`${registryName} did not exist at ${ref}: every URN is new`)
  } else {
    const list = (parseJsonText(oldManifestText, `${registryName} at ${ref}`) as {schemas?: unknown})?.schemas
    for (const item of Array.isArray(list) ? list : []) {
      const entry = item as {urn?: unknown; schema?: unknown}
      if (typeof entry?.urn !== 'string') continue
      if (typeof entry.schema === 'string') oldEntries.set(entry.urn, {file: posix.normalize(entry.schema.replaceAll('\\', '/'))})
      else if (typeof entry.schema === 'object' && entry.schema !== null) oldEntries.set(entry.urn, {schema: entry.schema})
    }
  }
  const files = [...new Set([...oldEntries.values()].flatMap((e) => (e.file !== undefined && !e.file.startsWith('..') ? [e.file] : [])))]
  const texts = await git.read(files)
  const known = new Set(manifest.entries.map((e) => e.urn))
  const urns: UrnCompat[] = []
  const schemas = new Map<string, {old?: unknown; next?: unknown}>()
  const shown = (absolute: string) => relative(process.cwd(), absolute) || absolute
  for (const entry of manifest.entries) {
    const before = oldEntries.get(entry.urn)
    const file = entry.file === undefined ? shown(manifest.path) : shown(entry.schemaPath)
    if (before === undefined) {
      urns.push({urn: entry.urn, status: 'added', file})
      schemas.set(entry.urn, {next: entry.schema})
      continue
    }
    const oldText = before.file === undefined ? undefined : texts.get(before.file)
    if (before.file !== undefined && oldText === undefined) {
      warnings.push(`${entry.urn}: ${before.file} did not exist at ${ref}; compared as new`)
      urns.push({urn: entry.urn, status: 'added', file})
      continue
    }
    if (oldText !== undefined && entry.text !== undefined && oldText === entry.text) {
      urns.push({urn: entry.urn, status: 'unchanged', file})
      schemas.set(entry.urn, {old: entry.schema, next: entry.schema})
      continue
    }
    const oldSchema = oldText === undefined ? before.schema : parseJsonText(oldText, `${before.file} at ${ref}`)
    const result = compareSchemas(oldSchema, entry.schema)
    schemas.set(entry.urn, {old: oldSchema, next: entry.schema})
    urns.push({urn: entry.urn, status: 'changed', file, result, text: entry.text, ...(result.breaking > 0 ? {suggestedUrn: nextUrn(entry.urn, known)} : {})})
  }
  for (const [urn, before] of oldEntries) {
    if (known.has(urn)) continue
    urns.push({urn, status: 'removed', file: before.file === undefined ? shown(manifest.path) : shown(posix.join(folder, before.file))})
  }
  return {registry: shown(manifest.path), against: ref, urns, schemas, warnings}
}

/** The next version of a URN: `urn:babel:orders:created` → `…created.v2`, `….v2` → `….v3` (skipping taken ones). */
export function nextUrn(urn: string, taken: ReadonlySet<string> = new Set()): string {
  const match = /^(.*)\.v(\d+)$/.exec(urn)
  const base = match ? match[1] : urn
  let version = match ? Number(match[2]) + 1 : 2
  while (taken.has(`${base}.v${version}`)) version++
  return `${base}.v${version}`
}
