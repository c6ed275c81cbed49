/**
 * Tiny helpers shared by the binding projections (spec-broker-bindings.md).
 * Native metadata arrives in whatever shape a client library decoded it to — numbers,
 * bigints, strings, byte buffers, arrays for repeated Kafka headers — so every reader goes
 * through these instead of trusting a type.
 */

/** Options every producing projection accepts. */
export interface ProjectionOptions {
  /** Stamp the out-of-band `bq-replay-bypass` marker (spec-redrive-and-replay.md). */
  bypass?: boolean
}

/** Options for bindings with native delayed delivery. */
export interface DelayedProjectionOptions extends ProjectionOptions {
  /** Deliver no earlier than this many milliseconds from now; mirrored on a delay property. */
  delayMs?: number
  /** The clock, Unix ms, for bindings that need an absolute delivery time (defaults to Date.now()). */
  nowMs?: number
}

/** The value a producer stamps for the replay marker. */
export const BYPASS_MARKER_VALUE = '1'

/** A delay as a whole number of milliseconds; rejects what no broker could schedule. */
export function delayMillis(delayMs: number): number {
  if (!Number.isFinite(delayMs) || delayMs < 0) throw new RangeError(`delay must be a non-negative number of milliseconds, got ${delayMs}`)
  return Math.round(delayMs)
}

/** Text of a native value: strings as is, bytes decoded as UTF-8, numbers stringified. Empty = absent. */
export function nativeText(value: unknown): string | undefined {
  let text: string | undefined
  if (typeof value === 'string') text = value
  else if (value instanceof Uint8Array) text = Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8')
  else if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'bigint') text = String(value)
  return text === undefined || text === '' ? undefined : text
}

/**
 * A non-negative safe integer from a native value (number, bigint, decimal string or UTF-8 bytes),
 * or undefined for anything else: negatives, fractions, NaN, exponents, garbage.
 */
export function nonNegativeInt(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? value : undefined
  if (typeof value === 'bigint') return value >= 0n && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : undefined
  if (typeof value === 'string' || value instanceof Uint8Array) {
    const text = nativeText(value)?.trim()
    if (text === undefined || !/^\d+$/.test(text)) return undefined
    return nonNegativeInt(Number(text))
  }
  return undefined
}

/** An epoch-milliseconds instant from a Date or a non-negative integer. */
export function epochMillis(value: unknown): number | undefined {
  if (value instanceof Date) return nonNegativeInt(value.getTime())
  return nonNegativeInt(value)
}

/**
 * Whether a replay marker value switches the bypass on. The spec only says the marker is
 * "present"; producers stamp "1", and an explicit off value ("0", "false", "no", empty, 0,
 * false) is read as absent rather than as a replay.
 */
export function isBypassMarker(value: unknown): boolean {
  if (value === undefined || value === null || value === false || value === 0 || value === 0n) return false
  if (value === true) return true
  const text = nativeText(value)?.trim().toLowerCase()
  return text !== undefined && text !== '0' && text !== 'false' && text !== 'no'
}

/** The reconciled count for a max rule: the native count only when it is valid and higher. */
export function atLeastBody(bodyAttempts: number, nativeAttempts: number | undefined): number {
  return nativeAttempts !== undefined && nativeAttempts > bodyAttempts ? nativeAttempts : bodyAttempts
}

/** `count − 1` for a 1-based native counter, or undefined when the count is invalid or below 1. */
export function zeroBased(oneBasedCount: unknown): number | undefined {
  const count = nonNegativeInt(oneBasedCount)
  return count === undefined || count < 1 ? undefined : count - 1
}

/** Drops keys whose value is undefined, so an inverse projection lists only what was carried. */
export function carried<T extends object>(fields: T): T {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as T
}
