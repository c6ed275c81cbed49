import type {Ajv} from 'ajv'

import {UsageError, describeError} from '../errors.js'
import {UnsupportedPattern, linearRegExp} from '../linear-regexp.js'
import {isSchemaObject, walk} from './refs.js'
import {metaSchemaProblem, requireShallow, requireSupportedDraft} from './schema-document.js'

/**
 * `bq schema check` proves that a schema compiles under bq's validator without generating its
 * code (ajv's code generation is 4–6 ms a schema, most of check's time on a large registry).
 * What ajv's compile refuses, for a schema whose `$ref`s refProblems (refs.ts) has already
 * resolved, is: a schema too deep or of another draft, a keyword value the draft-07 meta-schema
 * rejects, and a `pattern` or `patternProperties` name that is not a regular expression (or not
 * one bq's linear-time engine runs). Those are checked here, in linear time. The rarer
 * constructs whose checks live in ajv's compile (`$async`, a `$id` below the root or with a
 * `#` anchor, a `$ref` that is not a local pointer) are left to the caller to compile for real:
 * false says so. Nothing here loads ajv (`ajv` is called only for a meta-schema check that the
 * build's precompiled validator does not cover, schema-document.ts), so a registry of ordinary
 * schemas is checked without it. test/unit/schema-compiles.test.ts holds the two ways to the
 * same verdicts.
 */
export function proveCompiles(schema: unknown, label: string, ajv: Ajv | (() => Ajv)): boolean {
  requireShallow(schema, label)
  requireSupportedDraft(schema, label)
  const problem = metaSchemaProblem(schema, ajv)
  if (problem !== undefined) throw new UsageError(`${label}: not a valid JSON Schema: ${problem}`, 'registry')
  let needsCompile = false
  walk(schema, [], (node, path) => {
    if (typeof node.pattern === 'string') requirePattern(node.pattern, label)
    if (isSchemaObject(node.patternProperties)) for (const source of Object.keys(node.patternProperties)) requirePattern(source, label)
    if ('$async' in node) needsCompile = true
    if (typeof node.$id === 'string' && (path.length > 0 || node.$id.includes('#'))) needsCompile = true
    if (typeof node.$ref === 'string' && !node.$ref.startsWith('#')) needsCompile = true
  })
  return !needsCompile
}

function requirePattern(source: string, label: string): void {
  try {
    linearRegExp(source, 'u')
  } catch (error) {
    if (error instanceof UnsupportedPattern) throw new UsageError(`${label}: ${error.message}`, 'registry')
    throw new UsageError(`${label}: not a valid JSON Schema: ${describeError(error)}`, 'registry')
  }
}
