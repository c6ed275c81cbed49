import {Ajv} from 'ajv'
import type {ErrorObject, ValidateFunction} from 'ajv'
import addFormatsModule from 'ajv-formats'

import {UsageError, describeError} from '../errors.js'
import {UnsupportedPattern, ajvRegExp} from '../linear-regexp.js'
import {readManifest} from './manifest.js'
import {childPath} from '../envelope/validate.js'
import type {Problem} from '../envelope/validate.js'
import {metaSchemaProblem, requireShallow, requireSupportedDraft} from './schema-document.js'
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
    const manifest = readManifest(path)
    const ajv = newAjv()
    const validators = new Map<string, ValidateFunction>()
    const schemas = new Map<string, unknown>()
    for (const entry of manifest.entries) {
      validators.set(entry.urn, compile(ajv, entry.schema, `${entry.urn} (${entry.schemaPath})`))
      schemas.set(entry.urn, entry.schema)
    }
    const entries = manifest.entries.map(({urn, schemaPath, owner, status}) => ({urn, schemaPath, owner, status}))
    return new SchemaRegistry(manifest.path, entries, validators, schemas)
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

export function newAjv(options: {addUsedSchema?: boolean; allErrors?: boolean; messages?: boolean; code?: {optimize?: boolean; source?: boolean}} = {}): Ajv {
  // strict: false — unknown keywords such as x-gdpr-sensitive are annotations, not errors.
  // validateSchema: false — compile() checks the meta-schema itself, in linear time (schema-document.ts).
  // code.regExp — `pattern` and `patternProperties` match in linear time (linear-regexp.ts).
  // BQ_BENCH_NATIVE_REGEXP=1 puts the backtracking engine back, for bench/regex only: never in use.
  const regExp = process.env.BQ_BENCH_NATIVE_REGEXP === '1' ? {} : {regExp: ajvRegExp}
  const ajv = new Ajv({allErrors: true, strict: false, validateFormats: true, validateSchema: false, ...options, code: {...options.code, ...regExp}})
  const addFormats = (addFormatsModule as unknown as {default?: typeof addFormatsModule}).default ?? addFormatsModule
  ;(addFormats as unknown as (ajv: Ajv) => Ajv)(ajv)
  return ajv
}

export function compile(ajv: Ajv, schema: unknown, label: string): ValidateFunction {
  requireShallow(schema, label)
  requireSupportedDraft(schema, label)
  const problem = metaSchemaProblem(schema, ajv)
  if (problem !== undefined) throw new UsageError(`${label}: not a valid JSON Schema: ${problem}`, 'registry')
  try {
    return ajv.compile(schema as object)
  } catch (error) {
    if (error instanceof UnsupportedPattern) throw new UsageError(`${label}: ${error.message}`, 'registry')
    throw new UsageError(`${label}: not a valid JSON Schema: ${describeError(error)}`, 'registry')
  }
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
