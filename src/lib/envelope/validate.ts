import {JsonSyntaxError, lineColumn, memberOf, parseJsonTree, sourceOf} from './json-tree.js'
import type {JsonNode} from './json-tree.js'
import {checkUrn} from './urn.js'

/**
 * Envelope validation against spec-envelope.md: every problem is reported with its JSON path
 * and a severity. Errors break the contract; warnings are legal but risky (`--strict` makes
 * them errors).
 */

export type Severity = 'error' | 'warning'

export interface Problem {
  severity: Severity
  /** Stable machine-readable code, e.g. `meta.schema_version.unsupported`. */
  code: string
  /** JSONPath of the offending value, e.g. `$.meta.created_at`. */
  path: string
  message: string
}

/** The result of reading one message body for validation. */
export interface EnvelopeCheck {
  problems: Problem[]
  /** The parsed body when it was a JSON object (plain values; big integers lose precision here). */
  value?: Record<string, unknown>
  /** The URN (`job`, else `urn`) when present as a string. */
  urn?: string
  /** `meta.id` when present as a string. */
  id?: string
}

export const LANGS = ['php', 'go', 'python', 'java', 'dotnet', 'node'] as const
export const DEAD_LETTER_REASONS = ['failed', 'unknown_urn', 'poison'] as const
const SUPPORTED_SCHEMA_VERSIONS = [1]
/** A timestamp below this (ms) is before 1973: almost certainly seconds, not milliseconds. */
const SECONDS_THRESHOLD = 100_000_000_000
const looksLikeSeconds = (timestamp: number) => timestamp > 0 && timestamp < SECONDS_THRESHOLD
const INT64_MAX = 9223372036854775807n
const INT64_MIN = -9223372036854775808n

/** Fields that early drafts used and the contract forbids (spec-envelope.md, "Forbidden fields"). */
const FORBIDDEN_TOP: Array<[string, string]> = [['timestamp', 'use meta.created_at (Unix ms)']]
const FORBIDDEN_META: Array<[string, string]> = [
  ['max_retries', 'retry limits are consumer-side configuration'],
  ['attempts', 'use top-level attempts'],
  ['source', 'use meta.lang'],
  ['ts', 'use meta.created_at (Unix ms)'],
]

const has = (object: object, key: string) => Object.prototype.hasOwnProperty.call(object, key)
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const typeName = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`)

/** JSONPath for a child key: `$.a.b`, or `$["odd key"]` when the key is not a plain identifier. */
export function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${parent}.${key}` : `${parent}[${JSON.stringify(key)}]`
}

/** Validates one body given as text. Never throws on bad input. */
export function validateEnvelopeText(text: string): EnvelopeCheck {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return {problems: [syntaxProblem(text)]}
  }
  if (!isObject(value)) {
    return {problems: [{severity: 'error', code: 'envelope.not_object', path: '$', message: `an envelope must be a JSON object, found ${typeName(value)}`}]}
  }
  const problems = validateEnvelopeValue(value)
  // Only a literal with 16+ digits can exceed 2^53 − 1; then the original spelling decides.
  if (hasLongDigitRun(text)) problems.push(...checkNumberRanges(text))
  // JSON.parse reads `1.0` as 1; only the token shows it is not an integer literal.
  if (Number.isInteger(value.attempts) && ATTEMPTS_NOT_INTEGER_SPELLED.test(text)) problems.push(...checkAttemptsToken(text))
  const urn = typeof value.job === 'string' ? value.job : typeof value.urn === 'string' ? value.urn : undefined
  const meta = value.meta
  const id = isObject(meta) && typeof meta.id === 'string' ? meta.id : undefined
  return {problems, value, urn, id}
}

function syntaxProblem(text: string): Problem {
  if (text.trim() === '') return {severity: 'error', code: 'json.empty', path: '$', message: 'empty message'}
  try {
    parseJsonTree(text)
  } catch (error) {
    if (error instanceof JsonSyntaxError) {
      const {line, column} = lineColumn(text, error.offset)
      const where = line > 1 ? `line ${line} column ${column}` : `column ${column}`
      return {severity: 'error', code: 'json.syntax', path: '$', message: `not valid JSON: ${error.message} at ${where}`}
    }
  }
  return {severity: 'error', code: 'json.syntax', path: '$', message: 'not valid JSON'}
}

/** The structural rules, on an already parsed object. */
export function validateEnvelopeValue(env: Record<string, unknown>): Problem[] {
  const problems: Problem[] = []
  const error = (code: string, path: string, message: string) => problems.push({severity: 'error', code, path, message})
  const warning = (code: string, path: string, message: string) => problems.push({severity: 'warning', code, path, message})

  // job / urn
  const hasJob = has(env, 'job')
  const hasUrn = has(env, 'urn')
  if (!hasJob && !hasUrn) {
    error('job.missing', '$.job', "no 'job' or 'urn': the message has no identity")
  } else {
    const key = hasJob ? 'job' : 'urn'
    const urn = env[key]
    if (typeof urn !== 'string') error(`${key}.type`, `$.${key}`, `'${key}' must be a string URN, found ${typeName(urn)}`)
    else if (urn.trim() === '') error(`${key}.empty`, `$.${key}`, `'${key}' is empty: every message needs a URN`)
    else for (const issue of checkUrn(urn)) warning(issue.code, `$.${key}`, issue.message)
    if (!hasJob) warning('urn.alias', '$.urn', "uses the inbound alias 'urn'; producers should emit 'job'")
    if (hasJob && hasUrn && env.job !== env.urn) warning('urn.conflict', '$.urn', "both 'job' and 'urn' are present and differ; consumers read 'job'")
  }

  // trace_id
  if (!has(env, 'trace_id')) error('trace_id.missing', '$.trace_id', "'trace_id' is required")
  else checkUuid(env.trace_id, '$.trace_id', 'trace_id', error, warning)

  // data
  if (!has(env, 'data')) error('data.missing', '$.data', "'data' is required")
  else if (!isObject(env.data)) error('data.type', '$.data', `'data' must be a JSON object, found ${typeName(env.data)}`)

  // attempts
  if (!has(env, 'attempts')) error('attempts.missing', '$.attempts', "'attempts' is required (0 for a new message)")
  else checkCount(env.attempts, '$.attempts', 'attempts', error)

  // meta
  if (!has(env, 'meta')) error('meta.missing', '$.meta', "'meta' is required")
  else if (!isObject(env.meta)) error('meta.type', '$.meta', `'meta' must be an object, found ${typeName(env.meta)}`)
  else checkMeta(env.meta, error, warning)

  for (const [key, advice] of FORBIDDEN_TOP) {
    if (has(env, key)) error(`forbidden.${key}`, childPath('$', key), `'${key}' is a forbidden field: ${advice}`)
  }

  if (has(env, 'dead_letter')) checkDeadLetter(env.dead_letter, error, warning)
  return problems
}

type Report = (code: string, path: string, message: string) => void

function checkMeta(meta: Record<string, unknown>, error: Report, warning: Report) {
  if (!has(meta, 'id')) error('meta.id.missing', '$.meta.id', "'meta.id' is required")
  else checkUuid(meta.id, '$.meta.id', 'meta.id', error, warning)

  if (!has(meta, 'queue')) error('meta.queue.missing', '$.meta.queue', "'meta.queue' is required")
  else if (typeof meta.queue !== 'string') error('meta.queue.type', '$.meta.queue', `'meta.queue' must be a non-empty string, found ${typeName(meta.queue)}`)
  else if (meta.queue === '') error('meta.queue.empty', '$.meta.queue', "'meta.queue' is empty: it must name the queue the message was produced onto")

  if (!has(meta, 'lang')) error('meta.lang.missing', '$.meta.lang', "'meta.lang' is required")
  else if (typeof meta.lang !== 'string') error('meta.lang.type', '$.meta.lang', `'meta.lang' must be a string, found ${typeName(meta.lang)}`)
  else if (!(LANGS as readonly string[]).includes(meta.lang)) error('meta.lang.unknown', '$.meta.lang', `'meta.lang' is "${meta.lang}"; expected one of ${LANGS.join(', ')}`)

  if (!has(meta, 'schema_version')) error('meta.schema_version.missing', '$.meta.schema_version', "'meta.schema_version' is required")
  else if (!Number.isInteger(meta.schema_version)) error('meta.schema_version.type', '$.meta.schema_version', `'meta.schema_version' must be an integer, found ${typeName(meta.schema_version)}`)
  else if (!SUPPORTED_SCHEMA_VERSIONS.includes(meta.schema_version as number)) {
    error('meta.schema_version.unsupported', '$.meta.schema_version', `unsupported schema_version ${meta.schema_version} (this version of bq understands ${SUPPORTED_SCHEMA_VERSIONS.join(', ')})`)
  }

  if (!has(meta, 'created_at')) error('meta.created_at.missing', '$.meta.created_at', "'meta.created_at' is required (Unix ms)")
  else if (checkCount(meta.created_at, '$.meta.created_at', 'meta.created_at', error) && looksLikeSeconds(meta.created_at as number)) {
    warning('meta.created_at.seconds', '$.meta.created_at', `'meta.created_at' ${meta.created_at} looks like seconds; the contract wants Unix milliseconds`)
  }

  for (const [key, advice] of FORBIDDEN_META) {
    if (has(meta, key)) error(`forbidden.meta.${key}`, childPath('$.meta', key), `'meta.${key}' is a forbidden field: ${advice}`)
  }
}

function checkDeadLetter(block: unknown, error: Report, warning: Report) {
  const path = '$.dead_letter'
  if (!isObject(block)) {
    error('dead_letter.type', path, `'dead_letter' must be an object, found ${typeName(block)}`)
    return
  }
  if (!has(block, 'reason')) error('dead_letter.reason.missing', `${path}.reason`, "'dead_letter.reason' is required")
  else if (typeof block.reason !== 'string') error('dead_letter.reason.type', `${path}.reason`, `'dead_letter.reason' must be a string, found ${typeName(block.reason)}`)
  else if (!(DEAD_LETTER_REASONS as readonly string[]).includes(block.reason)) {
    error('dead_letter.reason.unknown', `${path}.reason`, `'dead_letter.reason' is "${block.reason}"; expected one of ${DEAD_LETTER_REASONS.join(', ')}`)
  }
  if (!has(block, 'failed_at')) error('dead_letter.failed_at.missing', `${path}.failed_at`, "'dead_letter.failed_at' is required (Unix ms)")
  else if (checkCount(block.failed_at, `${path}.failed_at`, 'dead_letter.failed_at', error) && looksLikeSeconds(block.failed_at as number)) {
    warning('dead_letter.failed_at.seconds', `${path}.failed_at`, `'dead_letter.failed_at' ${block.failed_at} looks like seconds; the contract wants Unix milliseconds`)
  }
  if (!has(block, 'original_queue')) error('dead_letter.original_queue.missing', `${path}.original_queue`, "'dead_letter.original_queue' is required")
  else if (typeof block.original_queue !== 'string') error('dead_letter.original_queue.type', `${path}.original_queue`, `'dead_letter.original_queue' must be a string, found ${typeName(block.original_queue)}`)
  if (!has(block, 'attempts')) error('dead_letter.attempts.missing', `${path}.attempts`, "'dead_letter.attempts' is required")
  else checkCount(block.attempts, `${path}.attempts`, 'dead_letter.attempts', error)
  for (const key of ['error', 'exception']) {
    if (has(block, key) && block[key] !== null && typeof block[key] !== 'string') {
      error(`dead_letter.${key}.type`, `${path}.${key}`, `'dead_letter.${key}' must be a string or null, found ${typeName(block[key])}`)
    }
  }
  if (has(block, 'lang') && (typeof block.lang !== 'string' || !(LANGS as readonly string[]).includes(block.lang))) {
    error('dead_letter.lang.unknown', `${path}.lang`, `'dead_letter.lang' must be one of ${LANGS.join(', ')}`)
  }
}

/** A non-negative integer; reports and returns false otherwise. */
function checkCount(value: unknown, path: string, name: string, error: Report): boolean {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    error(`${name}.type`, path, `'${name}' must be an integer, found ${typeName(value)}`)
    return false
  }
  if (value < 0) {
    error(`${name}.negative`, path, `'${name}' must not be negative`)
    return false
  }
  return true
}

function checkUuid(value: unknown, path: string, name: string, error: Report, warning: Report) {
  if (typeof value !== 'string' || value === '') error(`${name}.type`, path, `'${name}' must be a non-empty string (a UUID), found ${typeName(value)}`)
  else if (!isUuid(value)) warning(`${name}.not_uuid`, path, `'${name}' "${truncate(value)}" is not a UUID`)
}

/** 8-4-4-4-12 hex digits (any version); a hand loop, as this runs twice per message. */
export function isUuid(value: string): boolean {
  if (value.length !== 36) return false
  for (let i = 0; i < 36; i++) {
    const c = value.charCodeAt(i)
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 45) return false
    } else if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70))) {
      return false
    }
  }
  return true
}

/** True when the text holds 16 or more consecutive digits (a hand loop: this runs on every message). */
function hasLongDigitRun(text: string): boolean {
  let run = 0
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= 48 && c <= 57) {
      if (++run >= 16) return true
    } else {
      run = 0
    }
  }
  return false
}

/**
 * A cheap gate before the lossless parse: a top-level `attempts` whose token has a fraction or an
 * exponent. Each letter of the key may also be written as a `\u00XX` escape, so none slips past;
 * a false positive only costs the parse.
 */
const ATTEMPTS_NOT_INTEGER_SPELLED = /"(?:a|\\u0061)(?:t|\\u0074)(?:t|\\u0074)(?:e|\\u0065)(?:m|\\u006d)(?:p|\\u0070)(?:t|\\u0074)(?:s|\\u0073)"\s*:\s*-?\d+[.eE]/i

/**
 * `"attempts": 1.0` (or `1e0`) is an integer to JavaScript but a float to the Python consumer,
 * which refuses it: a warning, from the token as written.
 */
function checkAttemptsToken(text: string): Problem[] {
  let root: JsonNode
  try {
    root = parseJsonTree(text)
  } catch {
    return []
  }
  const node = root.kind === 'object' ? memberOf(root, 'attempts')?.value : undefined
  if (node?.kind !== 'number') return []
  const token = sourceOf(text, node)
  if (/^-?\d+$/.test(token)) return []
  return [{severity: 'warning', code: 'attempts.non_integer_token', path: '$.attempts', message: `'attempts' is written ${truncate(token)}, not as an integer literal: the Python consumer refuses it (write ${Number(token)})`}]
}

function truncate(text: string, max = 60): string {
  return text.length > max ? `${text.slice(0, max)}…` : text
}

/**
 * Integers beyond 2^53 − 1 lose precision in JavaScript consumers (a warning); beyond signed
 * 64-bit they break the contract (an error). Needs the original spelling, so it reads the
 * lossless tree, so callers run it only when a parsed number is out of the safe range.
 */
export function checkNumberRanges(text: string): Problem[] {
  let root: JsonNode
  try {
    root = parseJsonTree(text)
  } catch {
    return []
  }
  const problems: Problem[] = []
  const work: Array<{node: JsonNode; path: string}> = [{node: root, path: '$'}]
  while (work.length > 0) {
    const {node, path} = work.pop() as {node: JsonNode; path: string}
    if (node.kind === 'object') {
      for (let i = node.members.length - 1; i >= 0; i--) work.push({node: node.members[i].value, path: childPath(path, node.members[i].key)})
    } else if (node.kind === 'array') {
      for (let i = node.items.length - 1; i >= 0; i--) work.push({node: node.items[i], path: childPath(path, i)})
    } else if (node.kind === 'number') {
      const raw = text.slice(node.start, node.end)
      if (!/^-?\d+$/.test(raw) || raw.replace('-', '').length < 16) continue
      const big = BigInt(raw)
      if (big > INT64_MAX || big < INT64_MIN) {
        problems.push({severity: 'error', code: 'number.int64', path, message: `integer ${truncate(raw)} does not fit signed 64-bit`})
      } else if (big > BigInt(Number.MAX_SAFE_INTEGER) || big < BigInt(Number.MIN_SAFE_INTEGER)) {
        problems.push({severity: 'warning', code: 'number.unsafe_integer', path, message: `integer ${raw} is beyond 2^53 − 1: JavaScript consumers will lose precision (carry it as a string)`})
      }
    }
  }
  return problems
}
