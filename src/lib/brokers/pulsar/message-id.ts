/**
 * Pulsar message ids. The WebSocket API hands them out (and takes a reader's start position) as
 * base64 of the protobuf `MessageIdData`; the admin REST API writes positions as `ledger:entry`.
 * bq needs to order them and to turn a subscription's mark-delete position into a reader start,
 * so it reads and writes the few varint fields involved itself rather than pulling in protobuf.
 */

export interface Position {
  ledger: number
  entry: number
  /** Index inside a batch entry; -1 for a message that is an entry of its own. */
  batchIndex: number
  /** Messages in the batch entry, when the id says (0 = not a batch). */
  batchSize: number
}

const FIELD_LEDGER = 1
const FIELD_ENTRY = 2
const FIELD_BATCH_INDEX = 4
const FIELD_BATCH_SIZE = 6

/** Decodes a base64 `MessageIdData`; undefined when it is not one. */
export function decodeMessageId(base64: string): Position | undefined {
  const bytes = Buffer.from(base64, 'base64')
  const position: Position = {ledger: Number.NaN, entry: Number.NaN, batchIndex: -1, batchSize: 0}
  let at = 0
  while (at < bytes.length) {
    const key = readVarint(bytes, at)
    if (key === undefined) return undefined
    at = key.next
    const field = Number(key.value >> 3n)
    const wire = Number(key.value & 7n)
    if (wire === 0) {
      const value = readVarint(bytes, at)
      if (value === undefined) return undefined
      at = value.next
      const signed = Number(BigInt.asIntN(64, value.value))
      if (field === FIELD_LEDGER) position.ledger = signed
      else if (field === FIELD_ENTRY) position.entry = signed
      else if (field === FIELD_BATCH_INDEX) position.batchIndex = signed
      else if (field === FIELD_BATCH_SIZE) position.batchSize = signed
    } else if (wire === 2) {
      const length = readVarint(bytes, at)
      if (length === undefined) return undefined
      at = length.next + Number(length.value)
    } else if (wire === 1) {
      at += 8
    } else if (wire === 5) {
      at += 4
    } else {
      return undefined
    }
  }
  if (at !== bytes.length || !Number.isSafeInteger(position.ledger) || !Number.isSafeInteger(position.entry)) return undefined
  return position
}

/** base64 `MessageIdData` for a ledger:entry position (a reader starts right after it). */
export function encodeMessageId(ledger: number, entry: number): string {
  return Buffer.from([...varintField(FIELD_LEDGER, ledger), ...varintField(FIELD_ENTRY, entry)]).toString('base64')
}

/** `7:12` (admin REST) → {ledger: 7, entry: 12}. */
export function parsePosition(text: unknown): {ledger: number; entry: number} | undefined {
  if (typeof text !== 'string') return undefined
  const match = /^(-?\d+):(-?\d+)$/.exec(text.trim())
  if (match === null) return undefined
  return {ledger: Number(match[1]), entry: Number(match[2])}
}

/** Negative, zero or positive as a is before, at or after b (entry order; batch index last). */
export function comparePositions(a: {ledger: number; entry: number; batchIndex?: number}, b: {ledger: number; entry: number; batchIndex?: number}): number {
  return a.ledger - b.ledger || a.entry - b.entry || (a.batchIndex ?? -1) - (b.batchIndex ?? -1)
}

/** `7:12` or `7:12:3` (batch index), for display. */
export function formatPosition(position: Position): string {
  return position.batchIndex >= 0 ? `${position.ledger}:${position.entry}:${position.batchIndex}` : `${position.ledger}:${position.entry}`
}

/**
 * A cursor's individually acknowledged ranges as the admin REST API prints them,
 * `[(7:2..7:4], (7:9..7:10]]`: each range is open at its start and closed at its end.
 */
export function parseDeletedRanges(text: unknown): Array<{from: {ledger: number; entry: number}; to: {ledger: number; entry: number}}> {
  if (typeof text !== 'string') return []
  const ranges: Array<{from: {ledger: number; entry: number}; to: {ledger: number; entry: number}}> = []
  for (const match of text.matchAll(/\((-?\d+):(-?\d+)\.\.(-?\d+):(-?\d+)\]/g)) {
    ranges.push({from: {ledger: Number(match[1]), entry: Number(match[2])}, to: {ledger: Number(match[3]), entry: Number(match[4])}})
  }
  return ranges
}

/** True when the entry lies in one of the (open, closed] ranges. */
export function inDeletedRanges(position: {ledger: number; entry: number}, ranges: ReturnType<typeof parseDeletedRanges>): boolean {
  return ranges.some((range) => comparePositions(position, range.from) > 0 && comparePositions(position, range.to) <= 0)
}

function readVarint(bytes: Buffer, start: number): {value: bigint; next: number} | undefined {
  let value = 0n
  let shift = 0n
  for (let at = start; at < bytes.length && shift < 70n; at++) {
    const byte = bytes[at]
    value |= BigInt(byte & 0x7f) << shift
    if ((byte & 0x80) === 0) return {value, next: at + 1}
    shift += 7n
  }
  return undefined
}

function varintField(field: number, value: number): number[] {
  const out = [(field << 3) | 0]
  let rest = BigInt.asUintN(64, BigInt(value))
  do {
    let byte = Number(rest & 0x7fn)
    rest >>= 7n
    if (rest !== 0n) byte |= 0x80
    out.push(byte)
  } while (rest !== 0n)
  return out
}
