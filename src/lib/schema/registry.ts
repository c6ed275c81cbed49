import {readFileSync} from 'node:fs'
import {dirname, resolve} from 'node:path'

import {Ajv} from 'ajv'
import type {ErrorObject, ValidateFunction} from 'ajv'
import addFormatsModule from 'ajv-formats'

import {UsageError, describeError} from '../errors.js'
import {childPath} from '../envelope/validate.js'
import type {Problem} from '../envelope/validate.js'
import {sensitivePathsOf} from './sensitive.js'
import type {SensitivePath} from './sensitive.js'

/**
 * A babelqueue-registry manifest (`registry.json`): per-URN JSON Schemas for `data`, validated
 * with ajv, a complete draft-07 implementation. Loaded eagerly so a broken registry is a
 * usage error up front, not a surprise halfway through a run.
 */
export interface RegistryEntry {
  urn: string
  schemaPath: string
  owner?: string
  status?: string
}

export class SchemaRegistry {
  readonly path: string
  readonly entries: RegistryEntry[]
  private readonly validators = new Map<string, ValidateFunction>()
  /** The `x-gdpr-sensitive` fields of each URN's data (masking, ops/mask.ts). */
  private readonly sensitive = new Map<string, SensitivePath[]>()

  private constructor(path: string, entries: RegistryEntry[], validators: Map<string, ValidateFunction>, schemas: Map<string, unknown>) {
    this.path = path
    this.entries = entries
    this.validators = validators
    for (const [urn, schema] of schemas) this.sensitive.set(urn, sensitivePathsOf(schema))
  }

  /** Reads and compiles a registry. Throws UsageError with a one-line reason when it is unusable. */
  static load(path: string): SchemaRegistry {
    const registryPath = resolve(path)
    const manifest = readJson(registryPath, 'registry')
    const list = (manifest as {schemas?: unknown}).schemas
    if (!Array.isArray(list)) throw new UsageError(`${path}: not a babelqueue registry (expected {"schemas": [{"urn": ..., "schema": ...}]})`, 'registry')
    const ajv = newAjv()
    const entries: RegistryEntry[] = []
    const validators = new Map<string, ValidateFunction>()
    const schemas = new Map<string, unknown>()
    list.forEach((item: unknown, index: number) => {
      const entry = item as {urn?: unknown; schema?: unknown; owner?: unknown; status?: unknown}
      if (typeof entry?.urn !== 'string' || entry.urn === '') throw new UsageError(`${path}: schemas[${index}] has no "urn"`, 'registry')
      let schema: unknown
      let schemaPath: string
      if (typeof entry.schema === 'string') {
        schemaPath = resolve(dirname(registryPath), entry.schema)
        schema = readJson(schemaPath, `schema for ${entry.urn}`)
      } else if (typeof entry.schema === 'object' && entry.schema !== null) {
        schemaPath = `${registryPath}#/schemas/${index}/schema`
        schema = entry.schema
      } else {
        throw new UsageError(`${path}: schemas[${index}] (${entry.urn}) has no "schema"`, 'registry')
      }
      if (validators.has(entry.urn)) throw new UsageError(`${path}: ${entry.urn} is registered twice`, 'registry')
      validators.set(entry.urn, compile(ajv, schema, `${entry.urn} (${schemaPath})`))
      schemas.set(entry.urn, schema)
      entries.push({urn: entry.urn, schemaPath, owner: stringOrUndefined(entry.owner), status: stringOrUndefined(entry.status)})
    })
    return new SchemaRegistry(registryPath, entries, validators, schemas)
  }

  /** A registry holding one schema, for `--urn` checks and tests. */
  static fromSchema(urn: string, schema: unknown, label = 'inline schema'): SchemaRegistry {
    const validators = new Map([[urn, compile(newAjv(), schema, label)]])
    return new SchemaRegistry(label, [{urn, schemaPath: label}], validators, new Map([[urn, schema]]))
  }

  /** The personal-data fields of a URN's data; empty when it declares none or is not registered. */
  sensitivePaths(urn: string): SensitivePath[] {
    return this.sensitive.get(urn) ?? []
  }

  has(urn: string): boolean {
    return this.validators.has(urn)
  }

  /**
   * Problems of `data` against the URN's schema, with paths under `basePath` (`$.data` for an
   * envelope, `$` for bare data). Undefined when the URN has no registered schema.
   */
  check(urn: string, data: unknown, basePath = '$.data'): Problem[] | undefined {
    const validate = this.validators.get(urn)
    if (!validate) return undefined
    if (validate(data)) return []
    return (validate.errors ?? []).map((error) => toProblem(error, basePath))
  }
}

function newAjv(): Ajv {
  // strict: false — unknown keywords such as x-gdpr-sensitive are annotations, not errors.
  const ajv = new Ajv({allErrors: true, strict: false, validateFormats: true})
  const addFormats = (addFormatsModule as unknown as {default?: typeof addFormatsModule}).default ?? addFormatsModule
  ;(addFormats as unknown as (ajv: Ajv) => Ajv)(ajv)
  return ajv
}

function compile(ajv: Ajv, schema: unknown, label: string): ValidateFunction {
  const declared = (schema as {$schema?: unknown})?.$schema
  if (typeof declared === 'string' && !/draft-07|draft-06|draft-04/.test(declared)) {
    throw new UsageError(`${label}: $schema ${declared} is not supported (bq validates draft-07 schemas)`, 'registry')
  }
  try {
    return ajv.compile(schema as object)
  } catch (error) {
    throw new UsageError(`${label}: not a valid JSON Schema: ${describeError(error)}`, 'registry')
  }
}

function readJson(path: string, what: string): unknown {
  let text: string
  try {
    text = readFileSync(path, 'utf8')
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    throw new UsageError(`cannot read ${what} ${path}: ${code === 'ENOENT' ? 'no such file' : describeError(error)}`, 'registry')
  }
  try {
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)
  } catch (error) {
    throw new UsageError(`${what} ${path} is not valid JSON: ${describeError(error)}`, 'registry')
  }
}

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

/** Converts an ajv error into a Problem whose path points at the offending value. */
function toProblem(error: ErrorObject, basePath: string): Problem {
  let path = basePath
  for (const segment of error.instancePath.split('/').slice(1)) {
    const key = segment.replace(/~1/g, '/').replace(/~0/g, '~')
    path = /^\d+$/.test(key) ? childPath(path, Number(key)) : childPath(path, key)
  }
  let message = error.message ?? 'does not match the schema'
  const params = error.params as Record<string, unknown>
  if (error.keyword === 'required') path = childPath(path, String(params.missingProperty))
  if (error.keyword === 'additionalProperties') {
    path = childPath(path, String(params.additionalProperty))
    message = 'is not allowed by the schema (additionalProperties: false)'
  }
  if (error.keyword === 'enum') message = `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`
  return {severity: 'error', code: `schema.${error.keyword}`, path, message}
}
