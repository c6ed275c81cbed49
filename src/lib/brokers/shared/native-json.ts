/**
 * Native property values in JSON and back, for NativeProperties (an export's `native` object):
 * what JSON has no type for is a one-key tagged object, `{"$binary":"<base64>"}` for bytes and
 * `{"$timestamp":<Unix ms>}` for a date (an AMQP 1.0 timestamp); strings, numbers, booleans,
 * null, lists and maps are themselves. Anything else an SDK returns is already JSON-shaped
 * (amqplib's `{"!":"timestamp","value":…}` typed form is kept as it is, and read back by amqplib).
 */
const BINARY = '$binary'
const TIMESTAMP = '$timestamp'

export function toNativeJson(value: unknown): unknown {
  if (value === undefined || value === null) return null
  if (value instanceof Uint8Array) return {[BINARY]: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')}
  if (value instanceof Date) return {[TIMESTAMP]: value.getTime()}
  if (typeof value === 'bigint') return Number(value)
  if (Array.isArray(value)) return value.map(toNativeJson)
  if (value instanceof Map) return Object.fromEntries([...value.entries()].map(([key, inner]) => [String(key), toNativeJson(inner)]))
  if (typeof value === 'object') return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, inner]) => [key, toNativeJson(inner)]))
  return value
}

export function fromNativeJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(fromNativeJson)
  if (value === null || typeof value !== 'object') return value
  const entries = Object.entries(value as Record<string, unknown>)
  if (entries.length === 1) {
    const [key, inner] = entries[0]
    if (key === BINARY && typeof inner === 'string') return Buffer.from(inner, 'base64')
    if (key === TIMESTAMP && typeof inner === 'number') return new Date(inner)
  }
  return Object.fromEntries(entries.map(([key, inner]) => [key, fromNativeJson(inner)]))
}
