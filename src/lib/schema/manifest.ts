import {realpathSync} from 'node:fs'
import {dirname, isAbsolute, relative, resolve, sep} from 'node:path'

import {readBoundedText, type FileKind} from '../cli/bounded-file.js'
import {UsageError, describeError} from '../errors.js'
import {refProblems} from './refs.js'

/**
 * Reading a babelqueue-registry manifest (`registry.json`) and its schema files, without
 * compiling anything: `bq validate` compiles what this returns (registry.ts), the `bq schema`
 * commands read it as data. A broken manifest is a UsageError (exit 2) with a one-line reason.
 */

export interface ManifestEntry {
  urn: string
  /** The schema file's absolute path, or `registry.json#/schemas/<i>/schema` for an inline schema. */
  schemaPath: string
  /** The path as the manifest spells it (relative to the registry's folder); undefined when inline. */
  file?: string
  schema: unknown
  /** The schema file's text (undefined for an inline schema): for line numbers and cheap equality. */
  text?: string
  owner?: string
  status?: string
}

export interface Manifest {
  path: string
  /** The whole manifest, for fields of its own (`gdpr`, gdpr.ts). */
  raw: Record<string, unknown>
  entries: ManifestEntry[]
}

export interface ReadManifestOptions {
  /**
   * The `bq schema` commands: refuse an entry whose file lies outside the registry's folder, or
   * whose schema has a `$ref` that cannot be followed (not local, dangling, a cycle).
   */
  confined?: boolean
}

/** Reads the manifest and every schema it names; throws UsageError at the first unusable one. */
export function readManifest(path: string, options: ReadManifestOptions = {}): Manifest {
  const registryPath = resolve(path)
  const raw = readJsonFile(registryPath, 'registry', 'registry').value
  const list = (raw as {schemas?: unknown})?.schemas
  if (!Array.isArray(list)) throw new UsageError(`${path}: not a babelqueue registry (expected {"schemas": [{"urn": ..., "schema": ...}]})`, 'registry')
  const entries: ManifestEntry[] = []
  const seen = new Set<string>()
  let folder: RegistryFolder | undefined
  list.forEach((item: unknown, index: number) => {
    const entry = item as {urn?: unknown; schema?: unknown; owner?: unknown; status?: unknown}
    if (typeof entry?.urn !== 'string' || entry.urn === '') throw new UsageError(`${path}: schemas[${index}] has no "urn"`, 'registry')
    if (seen.has(entry.urn)) throw new UsageError(`${path}: ${entry.urn} is registered twice`, 'registry')
    seen.add(entry.urn)
    const meta = {urn: entry.urn, owner: stringOrUndefined(entry.owner), status: stringOrUndefined(entry.status)}
    if (typeof entry.schema === 'string') {
      const schemaPath = entryPath(registryPath, entry.schema, (folder ??= registryFolder(registryPath)))
      if (options.confined && schemaPath === undefined) throw new UsageError(`${path}: schemas[${index}] (${entry.urn}) points outside the registry's folder: ${entry.schema}`, 'registry')
      const file = schemaPath ?? resolve(dirname(registryPath), entry.schema)
      const {value, text} = readJsonFile(file, `schema for ${entry.urn}`, 'schema')
      entries.push({...meta, schemaPath: file, file: entry.schema, schema: value, text})
    } else if (typeof entry.schema === 'object' && entry.schema !== null) {
      entries.push({...meta, schemaPath: `${registryPath}#/schemas/${index}/schema`, schema: entry.schema})
    } else {
      throw new UsageError(`${path}: schemas[${index}] (${entry.urn}) has no "schema"`, 'registry')
    }
  })
  if (options.confined) {
    for (const entry of entries) {
      const problem = refProblems(entry.schema)[0]
      if (problem) throw new UsageError(`${entry.urn} (${entry.schemaPath}): ${problem.message} (at ${problem.pointer})`, 'registry')
    }
  }
  return {path: registryPath, raw: raw as Record<string, unknown>, entries}
}

/** A registry's folder, as given (absolute) and real (symlinks resolved): computed once per registry. */
export interface RegistryFolder {
  path: string
  real: string
}

export function registryFolder(registryPath: string): RegistryFolder {
  const folder = dirname(resolve(registryPath))
  try {
    return {path: folder, real: realpathSync.native(folder)}
  } catch {
    return {path: folder, real: folder}
  }
}

/**
 * The absolute path of an entry's file, or undefined when it lies outside the registry's folder.
 * `folder`: registryFolder's answer, when the caller reads many entries.
 */
export function entryPath(registryPath: string, file: string, folder: RegistryFolder = registryFolder(registryPath)): string | undefined {
  const target = resolve(folder.path, file)
  if (!within(folder.path, target)) return undefined
  // A symlink inside the folder that leads out of it is outside too: real paths are compared.
  let real: string
  try {
    real = realpathSync.native(target)
  } catch {
    return target
  }
  return within(folder.real, real) ? target : undefined
}

/** Both paths absolute and normalized (resolve's or realpath's answers). */
function within(folder: string, target: string): boolean {
  // On POSIX, path.relative of two such paths is the rest of `target` after `folder/` when it
  // starts so, else a path up through `..`: the same answer without resolving both again.
  if (sep === '/') {
    const prefix = folder.endsWith('/') ? folder : `${folder}/`
    return target.startsWith(prefix) && target.length > prefix.length && !target.startsWith('..', prefix.length)
  }
  const inside = relative(folder, target)
  return !(inside === '' || inside.startsWith('..') || isAbsolute(inside))
}

/**
 * Reads (bounded by `kind`'s cap, bounded-file.ts) and parses a JSON file (a UTF-8 byte order
 * mark allowed); UsageError naming it as `what` otherwise.
 */
export function readJsonFile(path: string, what: string, kind: FileKind): {value: unknown; text: string} {
  const text = readBoundedText(path, kind, {what, code: 'registry'})
  return {value: parseJsonText(text, `${what} ${path}`), text}
}

/** JSON.parse with a one-line UsageError naming `what`. */
export function parseJsonText(text: string, what: string): unknown {
  try {
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)
  } catch (error) {
    throw new UsageError(`${what} is not valid JSON: ${describeError(error)}`, 'registry')
  }
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}
