import {isUtf8} from 'node:buffer'

import type {EnvelopeFields} from './fields.js'
import {FRAME_KEY, readFrame} from './frame.js'
import {JsonSyntaxError, lineColumn, memberOf, parseJsonTree, sourceOf} from './json-tree.js'
import type {JsonNode, ObjectNode} from './json-tree.js'
import {scanTopLevel} from './top-level.js'
import type {TopLevelMember, TopLevelObject} from './top-level.js'

/** A JSON object as JSON.parse returns it. */
type Plain = Record<string, unknown>

/**
 * A decoded envelope: the original text, read three ways, each only when something asks:
 * - its values (URN, ids, attempts, the dead_letter block) come from native JSON.parse. The
 *   lossless tree looks a key up last-wins and reads a number as Number(its source), which is
 *   what JSON.parse does, so both answer alike, duplicate keys and integers beyond 2^53 included;
 * - the spans of its top-level members (`topLevel`), for the edits a redrive or an annotation
 *   splices (`attempts`, `dead_letter`); nothing below them is scanned;
 * - the lossless tree (`root`), for what re-emits source exactly: `raw`, `node`, exports.
 * Envelopes are immutable; `annotate` and `resetForRedrive` return new ones made by splicing
 * the original text, so every byte they do not deliberately change stays exactly as it was.
 */
export class Envelope {
  readonly text: string
  private tree: ObjectNode | undefined
  #plain: Plain | undefined
  #topLevel: TopLevelObject | undefined
  /** The UTF-8 bytes of `text` when it is all ASCII (so text offsets are byte offsets), as decoded. */
  readonly #ascii: Buffer | undefined

  /**
   * Use `decode` or `make`. The constructor trusts its input: `root` must be the tree of
   * `text`, or absent when `text` is known to be a valid envelope object (an edit of one), in
   * which case the tree is built only if something reads it — a redrive that only needs the
   * bytes of a reset envelope never parses them again. `ascii`, when given, must be the bytes of
   * an all-ASCII `text`.
   */
  constructor(text: string, root?: ObjectNode, ascii?: Buffer, plain?: Plain) {
    this.text = text
    this.tree = root
    this.#ascii = ascii
    this.#plain = plain
  }

  /** The envelope's values as JSON.parse reads them (last duplicate wins, as in `memberOf`). */
  private get plain(): Plain {
    if (this.#plain === undefined) this.#plain = JSON.parse(this.text) as Plain
    return this.#plain
  }

  /** The top-level members and their spans: the tree's own when it is built, else a shallow scan. */
  get topLevel(): TopLevelObject {
    if (this.#topLevel === undefined) this.#topLevel = this.tree ?? scanTopLevel(this.text)
    return this.#topLevel
  }

  /** A top-level member's value as plain JSON, or undefined when absent. */
  value(key: string): unknown {
    return Object.hasOwn(this.plain, key) ? this.plain[key] : undefined
  }

  /** A member of the `meta` object as plain JSON. */
  private metaValue(key: string): unknown {
    const meta = this.value('meta')
    return isPlainObject(meta) && Object.hasOwn(meta, key) ? meta[key] : undefined
  }

  /** The bytes this envelope was decoded from, when its text is all ASCII. */
  asciiBytes(): Buffer | undefined {
    return this.#ascii
  }

  get root(): ObjectNode {
    if (this.tree === undefined) this.tree = parseJsonTree(this.text) as ObjectNode
    return this.tree
  }

  /** The raw source of a top-level member's value (the last, as JSON.parse reads it), or undefined when absent. */
  raw(key: string): string | undefined {
    const members = this.topLevel.members
    for (let i = members.length - 1; i >= 0; i--) if (members[i].key === key) return sourceOf(this.text, members[i].value)
    return undefined
  }

  /** A top-level member's value node. */
  node(key: string): JsonNode | undefined {
    return memberOf(this.root, key)?.value
  }

  /** A member of the `meta` object. */
  metaNode(key: string): JsonNode | undefined {
    const meta = this.node('meta')
    return meta?.kind === 'object' ? memberOf(meta, key)?.value : undefined
  }

  /** The URN: `job`, or the inbound alias `urn` when `job` is absent. */
  get urn(): string | undefined {
    return stringOf(this.value('job')) ?? stringOf(this.value('urn'))
  }
  get traceId(): string | undefined {
    return stringOf(this.value('trace_id'))
  }
  get id(): string | undefined {
    return stringOf(this.metaValue('id'))
  }
  get queue(): string | undefined {
    return stringOf(this.metaValue('queue'))
  }
  get lang(): string | undefined {
    return stringOf(this.metaValue('lang'))
  }
  get schemaVersion(): number | undefined {
    return numberOf(this.metaValue('schema_version'))
  }
  get createdAt(): number | undefined {
    return numberOf(this.metaValue('created_at'))
  }
  get attempts(): number | undefined {
    return numberOf(this.value('attempts'))
  }

  /** The `dead_letter` block as plain values, or undefined on a normal (not dead-lettered) envelope. */
  get deadLetter(): DeadLetterView | undefined {
    const block = this.value('dead_letter')
    if (!isPlainObject(block)) return undefined
    const field = (key: string) => (Object.hasOwn(block, key) ? block[key] : undefined)
    return {
      reason: stringOf(field('reason')),
      error: stringOf(field('error')),
      exception: stringOf(field('exception')),
      failedAt: numberOf(field('failed_at')),
      originalQueue: stringOf(field('original_queue')),
      attempts: numberOf(field('attempts')),
      lang: stringOf(field('lang')),
    }
  }

  /** Body bytes: the envelope exactly as it travels. */
  toBuffer(): Buffer {
    return Buffer.from(this.text, 'utf8')
  }

}

function isPlainObject(value: unknown): value is Plain {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
function stringOf(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}
function numberOf(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined
}

export interface DeadLetterView {
  reason?: string
  error?: string
  exception?: string
  failedAt?: number
  originalQueue?: string
  attempts?: number
  lang?: string
}

export type DecodeErrorKind = 'empty' | 'not_utf8' | 'not_json' | 'not_object' | 'not_envelope'

/** A body that is not an envelope-shaped JSON object. Typed, so callers can treat it as poison. */
export class EnvelopeDecodeError extends Error {
  readonly kind: DecodeErrorKind
  /** Offset in the text where JSON parsing failed, when known. */
  readonly offset?: number
  constructor(kind: DecodeErrorKind, message: string, offset?: number) {
    super(message)
    this.name = 'EnvelopeDecodeError'
    this.kind = kind
    this.offset = offset
  }
}

/**
 * Decodes a body into an Envelope. Accepts `urn` as an alias of `job` (see `Envelope.urn`).
 * Throws EnvelopeDecodeError when the body is empty, not UTF-8, not JSON, or not an object.
 * Shape problems (missing fields, wrong types) are not decode errors: `validate` reports them.
 */
export function decode(body: Buffer | Uint8Array | string): Envelope {
  let text: string
  let ascii: Buffer | undefined
  if (typeof body === 'string') {
    text = body
  } else {
    if (!isUtf8(body)) throw new EnvelopeDecodeError('not_utf8', 'body is not valid UTF-8')
    const bytes = Buffer.from(body.buffer, body.byteOffset, body.byteLength)
    text = bytes.toString('utf8')
    // Valid UTF-8 has as many bytes as UTF-16 units only when every character is ASCII.
    if (text.length === bytes.length) ascii = bytes
  }
  if (text.trim() === '') throw new EnvelopeDecodeError('empty', 'body is empty')
  // The native parser answers for valid JSON; the lossless reader is built later, if at all.
  let plain: unknown
  try {
    plain = JSON.parse(text)
  } catch {
    plain = undefined
  }
  if (isPlainObject(plain)) return new Envelope(text, undefined, ascii, plain)
  // Not an object, or not JSON: the lossless reader says which, and where.
  let root: JsonNode
  try {
    root = parseJsonTree(text)
  } catch (error) {
    if (error instanceof JsonSyntaxError) {
      const {line, column} = lineColumn(text, error.offset)
      throw new EnvelopeDecodeError('not_json', `not valid JSON: ${error.message} at line ${line} column ${column}`, error.offset)
    }
    throw error
  }
  if (root.kind !== 'object') {
    throw new EnvelopeDecodeError('not_object', `expected a JSON object, found ${describeKind(root.kind)}`)
  }
  return new Envelope(text, root, ascii)
}

/**
 * Why a decoded JSON object is not a BabelQueue envelope at all, or undefined when it is one.
 * The rule is deliberately minimal (spec-envelope.md: `job` is required and non-empty, `urn` is
 * its inbound alias; `meta` is the required object that says where the message belongs): an
 * object whose URN (`job`, else `urn`, as `Envelope.urn` reads it) is a non-empty string and
 * whose `meta` is an object. Anything less — `{}`,
 * another system's JSON — is poison to redrive, replay and inspect: left in place, never
 * rewritten. Other shape problems (a missing `trace_id`, a bad `meta.id`) do not make a body
 * poison; `validate` reports them.
 */
export function notEnvelopeReason(envelope: Envelope): string | undefined {
  // The SDKs' Redis frame (frame.ts) is a wrapper, never an envelope, even around job and meta.
  if (envelope.value(FRAME_KEY) !== undefined) {
    const frame = readFrame(envelope.text)
    return frame.kind === 'malformed' ? `not an envelope: ${frame.reason}` : `not an envelope: a ${FRAME_KEY} frame (the SDKs' Redis wrapper) where a bare envelope belongs`
  }
  const urn = envelope.urn
  if (urn === undefined || urn === '') return 'not an envelope: no non-empty string "job" (or "urn")'
  const meta = envelope.value('meta')
  if (meta === undefined) return 'not an envelope: no "meta" object'
  if (!isPlainObject(meta)) return 'not an envelope: "meta" is not an object'
  return undefined
}

/**
 * `decode`, then the envelope rule (`notEnvelopeReason`): throws EnvelopeDecodeError of kind
 * `not_envelope` for a JSON object that is not an envelope. What redrive, replay and inspect use.
 */
export function decodeEnvelope(body: Buffer | Uint8Array | string): Envelope {
  const envelope = decode(body)
  const reason = notEnvelopeReason(envelope)
  if (reason !== undefined) throw new EnvelopeDecodeError('not_envelope', reason)
  return envelope
}

export function describeKind(kind: JsonNode['kind']): string {
  switch (kind) {
    case 'object': return 'an object'
    case 'array': return 'an array'
    case 'string': return 'a string'
    case 'number': return 'a number'
    default: return kind
  }
}

/** The bytes of an envelope as they travel: its text, unchanged. */
export function encode(envelope: Envelope): Buffer {
  return envelope.toBuffer()
}

/**
 * The envelope values a binding projects. Missing values fall back to the neutral ones the
 * spec defines (attempts 0, schema_version 1) so a damaged envelope can still be moved.
 */
export function fieldsOf(envelope: Envelope): EnvelopeFields {
  return {
    job: envelope.urn ?? '',
    traceId: envelope.traceId ?? '',
    id: envelope.id ?? '',
    queue: envelope.queue ?? '',
    lang: envelope.lang ?? '',
    schemaVersion: envelope.schemaVersion ?? 1,
    createdAt: envelope.createdAt ?? 0,
    attempts: envelope.attempts ?? 0,
  }
}

/**
 * Rewrites the top-level object of an envelope: members for which `drop` is true disappear
 * (with their separator), `replace` may give a member a new value source, and `append` adds
 * members at the end. Everything else — other members, their order, spelling and the
 * whitespace between them — is copied from the original text unchanged.
 */
function rewriteTopLevel(
  envelope: Envelope,
  edits: {drop?: (member: TopLevelMember) => boolean; replace?: (member: TopLevelMember) => string | undefined; append?: Array<[string, string]>},
): Envelope {
  const {text, topLevel: root} = envelope
  const members = root.members
  const open = text.slice(0, root.start + 1)
  const close = text.slice(root.end - 1)
  const appended = (kept: number) =>
    (edits.append ?? []).map(([key, value], i) => `${kept + i > 0 ? ',' : ''}${JSON.stringify(key)}:${value}`).join('')
  if (members.length === 0) return new Envelope(open + text.slice(root.start + 1, root.end - 1) + appended(0) + close)

  let out = open + text.slice(root.start + 1, members[0].keyStart)
  let kept = 0
  members.forEach((member, index) => {
    if (edits.drop?.(member)) return
    // The separator before a member is the original text since the previous member (comma included).
    if (kept > 0) out += text.slice(members[index - 1].value.end, member.keyStart)
    const replacement = edits.replace?.(member)
    out += text.slice(member.keyStart, member.value.start) + (replacement ?? sourceOf(text, member.value))
    kept++
  })
  out += appended(kept)
  out += text.slice(members[members.length - 1].value.end, root.end - 1) + close
  // Splicing whole members of a valid object yields a valid object: no need to parse it here.
  return new Envelope(out)
}

/** The edits a redrive makes to an envelope's top-level object (see `topLevelPieces`). */
interface TopLevelEdits {
  /** Members to leave out, with their separator. */
  drop: string
  /** A member whose value becomes `value`. */
  replace: string
  value: string
  /** Members added at the end: [key, value source]. */
  append: Array<[string, string]>
}

/**
 * Rewrites the top-level object of an envelope as pieces, in order: a pair of numbers is a range
 * of the original text to copy, a string is new text. Members whose key is `drop` disappear (with
 * their separator), the value of `replace` members becomes `value`, and `append` adds members at
 * the end. Everything else — other members, their order, spelling and the whitespace between
 * them — is copied from the original text unchanged.
 */
function topLevelPieces(envelope: Envelope, edits: TopLevelEdits): Array<number | string> {
  const {text, topLevel: root} = envelope
  const members = root.members
  const pieces: Array<number | string> = []
  const copy = (from: number, to: number) => {
    if (to <= from) return
    // A range that continues the previous one extends it.
    const last = pieces.length - 1
    if (last > 0 && pieces[last] === from && typeof pieces[last - 1] === 'number') pieces[last] = to
    else pieces.push(from, to)
  }
  const appended = (kept: number) => {
    for (let i = 0; i < edits.append.length; i++) {
      const [key, value] = edits.append[i]
      pieces.push(`${kept + i > 0 ? ',' : ''}${JSON.stringify(key)}:${value}`)
    }
  }
  if (members.length === 0) {
    copy(0, root.end - 1)
    appended(0)
    copy(root.end - 1, text.length)
    return pieces
  }
  copy(0, members[0].keyStart)
  let kept = 0
  for (let index = 0; index < members.length; index++) {
    const member = members[index]
    if (member.key === edits.drop) continue
    // The separator before a member is the original text since the previous member (comma included).
    if (kept > 0) copy(members[index - 1].value.end, member.keyStart)
    if (member.key === edits.replace) {
      copy(member.keyStart, member.value.start)
      if (edits.value !== '') pieces.push(edits.value)
    } else {
      copy(member.keyStart, member.value.end)
    }
    kept++
  }
  appended(kept)
  copy(members[members.length - 1].value.end, text.length)
  return pieces
}

function textOf(text: string, pieces: Array<number | string>): string {
  let out = ''
  for (let i = 0; i < pieces.length; i++) {
    const piece = pieces[i]
    if (typeof piece === 'string') out += piece
    else out += text.slice(piece, pieces[++i] as number)
  }
  return out
}

/** The UTF-8 bytes of the pieces, copying ranges from `ascii`, the bytes of an all-ASCII text. */
function bytesOf(ascii: Buffer, pieces: Array<number | string>): Buffer {
  let size = 0
  for (let i = 0; i < pieces.length; i++) {
    const piece = pieces[i]
    if (typeof piece === 'string') size += Buffer.byteLength(piece)
    else size += (pieces[++i] as number) - piece
  }
  const out = Buffer.allocUnsafe(size)
  let at = 0
  for (let i = 0; i < pieces.length; i++) {
    const piece = pieces[i]
    if (typeof piece === 'string') at += out.write(piece, at)
    else at += ascii.copy(out, at, piece, pieces[++i] as number)
  }
  return out
}

/** The edits `resetForRedrive` makes, or undefined when the envelope needs none. */
function redriveEdits(envelope: Envelope): TopLevelEdits | undefined {
  const members = envelope.topLevel.members
  let hasAttempts = false
  let changed = false
  for (const m of members) {
    if (m.key === 'dead_letter') changed = true
    else if (m.key === 'attempts') {
      hasAttempts = true
      if (sourceOf(envelope.text, m.value) !== '0') changed = true
    }
  }
  if (hasAttempts && !changed) return undefined
  return {drop: 'dead_letter', replace: 'attempts', value: '0', append: hasAttempts ? [] : [['attempts', '0']]}
}

/**
 * Resets a dead-lettered envelope for redrive: removes every `dead_letter` member and sets
 * top-level `attempts` to 0. Every other byte — `job`, `trace_id`, `data`, `meta`, unknown
 * top-level keys, their order and spelling — is kept exactly.
 */
export function resetForRedrive(envelope: Envelope): Envelope {
  const edits = redriveEdits(envelope)
  // Splicing whole members of a valid object yields a valid object: no need to parse it here.
  return edits === undefined ? envelope : new Envelope(textOf(envelope.text, topLevelPieces(envelope, edits)))
}

/**
 * Exactly the bytes of `resetForRedrive(envelope)`. For an envelope decoded from all-ASCII bytes
 * they are copied in ranges from those bytes, without building the reset text and encoding it
 * again (most of what resetting costs in a redrive of many messages).
 */
export function resetForRedriveBytes(envelope: Envelope): Buffer {
  const ascii = envelope.asciiBytes()
  if (ascii === undefined) return resetForRedrive(envelope).toBuffer()
  const edits = redriveEdits(envelope)
  return bytesOf(ascii, edits === undefined ? [0, ascii.length] : topLevelPieces(envelope, edits))
}

export interface DeadLetterInfo {
  reason: 'failed' | 'unknown_urn' | 'poison' | string
  originalQueue: string
  error?: string | null
  exception?: string | null
  /** Unix ms; defaults to now. */
  failedAt?: number
  /** Defaults to the envelope's own `attempts`. */
  attempts?: number
  /** Defaults to `node`. */
  lang?: string
}

/**
 * Returns a copy of the envelope carrying a `dead_letter` block (replacing any existing one).
 * `job`, `trace_id`, `data`, `meta` and `attempts` stay exactly as they were.
 */
export function annotate(envelope: Envelope, info: DeadLetterInfo): Envelope {
  const attempts = info.attempts !== undefined ? String(Math.trunc(info.attempts)) : typeof envelope.value('attempts') === 'number' ? envelope.raw('attempts') : '0'
  const block =
    '{' +
    [
      `"reason":${JSON.stringify(info.reason)}`,
      `"error":${JSON.stringify(info.error ?? null)}`,
      `"exception":${JSON.stringify(info.exception ?? null)}`,
      `"failed_at":${Math.trunc(info.failedAt ?? Date.now())}`,
      `"original_queue":${JSON.stringify(info.originalQueue)}`,
      `"attempts":${attempts}`,
      `"lang":${JSON.stringify(info.lang ?? 'node')}`,
    ].join(',') +
    '}'
  // Replace the last existing block in place (dropping earlier duplicates), or append one.
  const blocks = envelope.topLevel.members.filter((m) => m.key === 'dead_letter')
  const last = blocks[blocks.length - 1]
  return rewriteTopLevel(envelope, {
    drop: (m) => m.key === 'dead_letter' && m !== last,
    replace: (m) => (m === last ? block : undefined),
    append: last ? [] : [['dead_letter', block]],
  })
}

/**
 * Returns a copy with a new `meta.id` (for replays that must not be deduplicated as the
 * original). Only the id's value changes; `trace_id` and every other byte stay.
 */
export function withNewId(envelope: Envelope, id: string): Envelope {
  const meta = envelope.node('meta')
  const current = meta?.kind === 'object' ? memberOf(meta, 'id') : undefined
  if (!current) throw new EnvelopeDecodeError('not_object', 'the envelope has no meta.id to replace')
  const text = envelope.text
  return new Envelope(text.slice(0, current.value.start) + JSON.stringify(id) + text.slice(current.value.end))
}
