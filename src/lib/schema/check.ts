import {dirname, relative, resolve} from 'node:path'

import type {Ajv} from 'ajv'

import {FileRefusedError, readBoundedText} from '../cli/bounded-file.js'
import {UsageError, describeError} from '../errors.js'
import {checkUrn, isUrn} from '../envelope/urn.js'
import {entryPath, readJsonFile, registryFolder} from './manifest.js'
import {refProblems} from './refs.js'
import {CheckCache} from './check-cache.js'
import {proveCompiles} from './compiles.js'
import {precompiledMetaSchemaApplies, requireShallow} from './schema-document.js'
import {SchemaLines, parseErrorLine} from './schema-lines.js'

/**
 * `bq schema check`: the registry itself is sound. Unlike the other commands, which stop at the
 * first broken entry (exit 2), check reports every one: each entry's file exists inside the
 * registry's folder and parses, its URN is well-formed and unique, its `$ref`s resolve, and the
 * schema compiles under bq's validator (proven without generating its code: compiles.ts).
 * ajv itself is loaded only for a schema the proof leaves to it (rare), so that an ordinary
 * registry is checked in little more than bq's start (bench/schema/compare.js); a schema text
 * proven sound by an earlier run with the same build is not proven again (check-cache.ts).
 */

export interface CheckIssue {
  severity: 'error' | 'warning'
  rule: string
  message: string
  file: string
  line?: number
}

export interface EntryCheck {
  urn: string
  file: string
  issues: CheckIssue[]
}

export interface RegistryCheck {
  registry: string
  entries: EntryCheck[]
  errors: number
  warnings: number
}

export async function checkRegistry(registryPath: string): Promise<RegistryCheck> {
  const absolute = resolve(registryPath)
  const registryFile = shown(absolute)
  // A manifest that is not one (unreadable, not JSON, no "schemas" list) is a usage error.
  const {value: manifest, text: manifestText} = readJsonFile(absolute, 'registry', 'registry')
  const list = (manifest as {schemas?: unknown})?.schemas
  if (!Array.isArray(list)) throw new UsageError(`${registryPath}: not a babelqueue registry (expected {"schemas": [{"urn": ..., "schema": ...}]})`, 'registry')
  const manifestLines = new SchemaLines(manifestText)
  const folder = dirname(absolute)
  let validator: {ajv: Ajv; compile: (ajv: Ajv, schema: unknown, label: string) => unknown} | undefined
  const loadValidator = async () => {
    if (validator === undefined) {
      const {compile, newAjv} = await import('./registry.js')
      validator = {ajv: newAjv(), compile}
    }
    return validator
  }
  const seen = new Map<string, number>()
  // Root $ids (two schemas with one $id cannot both load), and the verdict for each schema text
  // already proven (a registry often repeats a schema under several URNs).
  const ids = new Map<string, number>()
  const proven = new Map<string, string | undefined>()
  const entries: EntryCheck[] = []
  const folderOf = registryFolder(absolute)
  const cache = CheckCache.open(absolute, import.meta.url)
  for (const [index, item] of (list as unknown[]).entries()) {
    const entry = (item ?? {}) as {urn?: unknown; schema?: unknown}
    const at = `/schemas/${index}`
    const urn = typeof entry.urn === 'string' ? entry.urn : `schemas[${index}]`
    const check: EntryCheck = {urn, file: registryFile, issues: []}
    entries.push(check)
    const problem = (rule: string, message: string, file = registryFile, line = manifestLines.lineOf(at), severity: 'error' | 'warning' = 'error') => check.issues.push({severity, rule, message, file, ...(line === undefined ? {} : {line})})
    if (typeof entry.urn !== 'string' || entry.urn === '') problem('urn.missing', `schemas[${index}] has no "urn"`)
    else if (!isUrn(entry.urn)) problem('urn.syntax', `"${entry.urn}" is not a URN (urn:<namespace>:<name>)`, registryFile, manifestLines.lineOf(`${at}/urn`))
    else {
      for (const issue of checkUrn(entry.urn)) problem(issue.code, issue.message, registryFile, manifestLines.lineOf(`${at}/urn`), 'warning')
      const first = seen.get(entry.urn)
      if (first !== undefined) problem('urn.duplicate', `${entry.urn} is registered twice (also schemas[${first}])`, registryFile, manifestLines.lineOf(`${at}/urn`))
      else seen.set(entry.urn, index)
    }
    let schema: unknown
    let lines: SchemaLines
    let sourceText: string | undefined
    let file: string
    if (typeof entry.schema === 'string') {
      const target = entryPath(absolute, entry.schema, folderOf)
      check.file = file = shown(target ?? resolve(folder, entry.schema))
      if (target === undefined) {
        problem('schema.outside', `${entry.schema} points outside the registry's folder`, registryFile, manifestLines.lineOf(`${at}/schema`))
        continue
      }
      let text: string
      try {
        text = readBoundedText(target, 'schema')
      } catch (error) {
        if (!(error instanceof FileRefusedError)) throw error
        problem(error.errno === 'ENOENT' ? 'schema.missing' : 'schema.unreadable', `${entry.schema}: ${error.reason}`, registryFile, manifestLines.lineOf(`${at}/schema`))
        continue
      }
      // Proven sound by an earlier run (check-cache.ts): nothing to prove, only its $id to count.
      const soundId = cache.soundBefore(text)
      if (soundId !== undefined && (soundId === null || !ids.has(soundId.replace(/#$/, '')))) {
        if (soundId !== null) ids.set(soundId.replace(/#$/, ''), index)
        continue
      }
      try {
        schema = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)
      } catch (error) {
        problem('schema.not_json', `not valid JSON: ${describeError(error)}`, file, parseErrorLine(text, describeError(error)) ?? 1)
        continue
      }
      lines = new SchemaLines(text)
      sourceText = text
    } else if (typeof entry.schema === 'object' && entry.schema !== null) {
      schema = entry.schema
      file = registryFile
      lines = new SchemaLines(manifestText, `${at}/schema`)
    } else {
      problem('schema.missing', `${urn} has no "schema"`)
      continue
    }
    if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) {
      // true/false are JSON Schemas, but a data schema that accepts everything (or nothing) is a
      // mistake, and AsyncAPI (export-asyncapi) cannot carry one.
      problem('schema.not_object', `the schema is ${JSON.stringify(schema)}: a data schema is an object`, file, 1)
      continue
    }
    // Before any walk over it: a schema nested deeper than the walkers go is one problem, not a crash.
    try {
      requireShallow(schema, file)
    } catch (error) {
      problem('schema.invalid', describeError(error).replace(`${file}: `, ''), file, 1)
      continue
    }
    const refs = refProblems(schema)
    for (const ref of refs) problem(`ref.${ref.kind}`, ref.message, file, lines.lineOf(ref.pointer))
    if (refs.length > 0) continue
    const id = (schema as {$id?: unknown}).$id
    if (typeof id === 'string') {
      const key = id.replace(/#$/, '')
      const first = ids.get(key)
      if (first !== undefined) problem('schema.invalid', `$id ${JSON.stringify(id)} is also the $id of schemas[${first}]`, file, lines.lineOf('/$id'))
      else ids.set(key, index)
      if (first !== undefined) continue
    }
    // A file's text stands for its schema (no need to print it again to compare).
    const text = sourceText ?? JSON.stringify(schema)
    let reason: string | undefined
    if (proven.has(text)) reason = proven.get(text)
    else {
      let compiled = false
      try {
        if (!precompiledMetaSchemaApplies(schema)) await loadValidator()
        if (!proveCompiles(schema, file, () => validator!.ajv)) {
          const {ajv, compile} = await loadValidator()
          compile(ajv, schema, file)
          compiled = true
        }
      } catch (error) {
        reason = describeError(error).replace(`${file}: `, '')
      }
      proven.set(text, reason)
      // Remembered: what bq's own build proved (not ajv's compile, nor ajv's meta-schema check of an
      // unusual $schema spelling, both of which depend on the ajv installed beside it).
      if (reason === undefined && !compiled && sourceText !== undefined && precompiledMetaSchemaApplies(schema)) cache.remember(sourceText, typeof id === 'string' ? id : null)
    }
    if (reason !== undefined) problem('schema.invalid', reason, file, lines.lineOf(''))
  }
  cache.save()
  const all = entries.flatMap((e) => e.issues)
  return {registry: registryFile, entries, errors: all.filter((i) => i.severity === 'error').length, warnings: all.filter((i) => i.severity === 'warning').length}
}

function shown(absolute: string): string {
  return relative(process.cwd(), absolute) || absolute
}
