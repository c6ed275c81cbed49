/**
 * JSON Patch (RFC 6902) on envelopes, for `dlq redrive --patch`. fast-json-patch applies the
 * operations (their semantics and validation are its job); bq converts the envelope to a value
 * whose numbers keep their exact digits (json-value.ts) and splices the result back into the
 * original text, so whatever the patch does not touch keeps its bytes.
 *
 * What a patch may change: `/data` (and anything in it) and members of `/meta` (`/meta/...`).
 * `/dead_letter` and `/attempts` belong to the redrive reset; `job`, `trace_id` and the rest of
 * the top level say what the message is, so they are refused too. Reading is free: `test` and the
 * `from` of `copy` may point anywhere (e.g. `test /dead_letter/reason`).
 */
import fastJsonPatch from 'fast-json-patch'
import type {Operation} from 'fast-json-patch'

import {UsageError, describeError} from '../errors.js'
import {Envelope, EnvelopeDecodeError, decodeEnvelope} from './envelope.js'
import {JsonSyntaxError, lineColumn, memberOf, parseJsonTree, sourceOf} from './json-tree.js'
import type {JsonNode} from './json-tree.js'
import {isJsonNumber, spliceJson, toJsonValue} from './json-value.js'
import type {JsonValue} from './json-value.js'

const {JsonPatchError, applyOperation, validate, unescapePathComponent} = fastJsonPatch

/** A parsed patch: kept as text and tree, so each message gets fresh operation values. */
export interface EnvelopePatch {
  text: string
  tree: JsonNode
  /** How many operations it has. */
  size: number
}

/** Where an operation may write: `/data` itself or below it, or a member of `/meta`. */
function writable(path: string): boolean {
  return path === '/data' || path.startsWith('/data/') || (path.startsWith('/meta/') && path.length > '/meta/'.length)
}

/**
 * Reads a patch file's text: a JSON array of operations. Throws UsageError (exit 2) with the line
 * and column of a syntax error, the operation fast-json-patch finds malformed, or one that writes
 * outside `/data` and `/meta/...`.
 */
export function parsePatch(text: string, label: string): EnvelopePatch {
  let tree: JsonNode
  try {
    tree = parseJsonTree(text)
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error
    const {line, column} = lineColumn(text, error.offset)
    throw new UsageError(`${label}: not valid JSON: ${error.message} at line ${line} column ${column}; nothing was changed`, 'patch')
  }
  if (tree.kind !== 'array') throw new UsageError(`${label}: a JSON Patch is an array of operations ([{"op": "replace", "path": "/data/amount", "value": 10}]); nothing was changed`, 'patch')
  const operations = toJsonValue(text, tree).value as unknown as Operation[]
  if (operations.length === 0) throw new UsageError(`${label}: the patch has no operations; nothing was changed`, 'patch')
  const malformed = validate(operations)
  if (malformed) throw new UsageError(`${label}: operation ${(malformed.index ?? 0) + 1}: ${firstLine(malformed.message)}; nothing was changed`, 'patch')
  operations.forEach((operation, index) => {
    const writes = operation.op === 'test' ? [] : operation.op === 'move' ? [operation.path, operation.from] : [operation.path]
    for (const path of writes) {
      if (writable(path)) continue
      const owner = path === '/dead_letter' || path.startsWith('/dead_letter/') || path === '/attempts' ? ' (the redrive reset owns it)' : ''
      throw new UsageError(`${label}: operation ${index + 1} (${operation.op} ${JSON.stringify(path)}) writes outside /data and /meta/...${owner}; nothing was changed`, 'patch')
    }
  })
  return {text, tree, size: operations.length}
}

/** The outcome of a patch on one envelope: the patched envelope, or why the patch did not apply. */
export type PatchOutcome = {envelope: Envelope} | {error: string}

/**
 * Applies the patch to one envelope. Operations apply in order; the first that fails (a `test`
 * that does not hold, a missing path) fails the whole patch, and the envelope is left as it was.
 */
export function applyEnvelopePatch(envelope: Envelope, patch: EnvelopePatch): PatchOutcome {
  const {value, origins} = toJsonValue(envelope.text, envelope.root)
  // Fresh operation values per envelope: an `add` hands its value to the document, which later operations may change.
  const operations = toJsonValue(patch.text, patch.tree).value as unknown as Operation[]
  let document = value
  for (let index = 0; index < operations.length; index++) {
    const operation = operations[index]
    const about = `operation ${index + 1} (${operation.op} ${operation.path})`
    const intoNumber = [operation.path, 'from' in operation ? operation.from : undefined].find((path) => path !== undefined && passesThroughNumber(document, path))
    if (intoNumber !== undefined) return {error: `patch ${about}: ${intoNumber} goes inside a number`}
    try {
      document = applyOperation(document, operation, true, true, true, index).newDocument
    } catch (error) {
      if (error instanceof JsonPatchError && error.name === 'TEST_OPERATION_FAILED') return {error: `patch ${about}: the value there is not ${operationValueText(patch, index)}`}
      return {error: `patch ${about}: ${firstLine(describeError(error))}`}
    }
  }
  const text = spliceJson(envelope.text, envelope.root, document, origins)
  try {
    return {envelope: decodeEnvelope(text)}
  } catch (error) {
    if (error instanceof EnvelopeDecodeError) return {error: `the patched message would not be an envelope (${error.message})`}
    throw error
  }
}

/** True when a pointer's parent chain reaches a number (fast-json-patch would look inside its wrapper). */
function passesThroughNumber(document: JsonValue, pointer: string): boolean {
  const tokens = pointer.split('/').slice(1).map(unescapePathComponent)
  let current: unknown = document
  for (const token of tokens.slice(0, -1)) {
    if (typeof current !== 'object' || current === null) return false
    current = (current as Record<string, unknown>)[token]
    if (isJsonNumber(current)) return true
  }
  return false
}

/** The `value` of one operation as the patch spells it. */
function operationValueText(patch: EnvelopePatch, index: number): string {
  const operation = patch.tree.kind === 'array' ? patch.tree.items[index] : undefined
  const value = operation?.kind === 'object' ? memberOf(operation, 'value')?.value : undefined
  return value === undefined ? 'the value given' : sourceOf(patch.text, value)
}

/** fast-json-patch appends the operation and document to its messages: the first line says it. */
function firstLine(message: string): string {
  return message.split('\n')[0].trim()
}
