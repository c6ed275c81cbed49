/**
 * AMQP 1.0 message sections for the Service Bus test server. A message is kept as its sections:
 * the bare message (properties, application-properties, body, footer) is stored as the exact bytes
 * the sender wrote, so bodies and typed application properties come back byte for byte; only the
 * header and the message annotations, which a broker may rewrite, are decoded and re-encoded.
 */
import {createRequire} from 'node:module'

const require = createRequire(import.meta.url)

/** A typed AMQP value as rhea's codec represents it. */
export interface Typed {
  type: {name: string; typecode: number}
  value: unknown
  descriptor?: Typed
}

interface Reader {
  position: number
  remaining(): number
  read(): Typed
}

interface TypesModule {
  Reader: new (buffer: Buffer) => Reader
  Writer: new () => {write(value: unknown): void; toBuffer(): Buffer}
  described(descriptor: Typed, value: Typed): Typed
  wrap_ulong(n: number): Typed
  wrap_uint(n: number): Typed
  wrap_int(n: number): Typed
  wrap_long(n: number): Typed
  wrap_boolean(b: boolean): Typed
  wrap_ubyte(n: number): Typed
  wrap_string(s: string): Typed
  wrap_symbol(s: string): Typed
  wrap_binary(b: Buffer): Typed
  wrap_uuid(b: Buffer | string): Typed
  wrap_timestamp(ms: number): Typed
  wrap_list(items: unknown[]): Typed
  wrap_map(map: Record<string, unknown>, keyWrapper?: (key: string) => Typed): Typed
  wrap_symbolic_map(map: Record<string, unknown>): Typed
  wrap_array(items: unknown[], code: number, descriptors?: unknown): Typed
  unwrap(value: Typed): unknown
}

/** What rhea's decoder yields for a message (only the fields the server reads). */
export interface DecodedMessage {
  message_id?: unknown
  correlation_id?: unknown
  subject?: string
  content_type?: string
  group_id?: string
  application_properties?: Record<string, unknown>
  message_annotations?: Record<string, unknown>
  delivery_count?: number
  ttl?: number
  durable?: boolean
  body?: unknown
  [key: string]: unknown
}

interface MessageModule {
  decode(buffer: Buffer): DecodedMessage
  accepted(): {described(): unknown}
  released(): {described(): unknown}
  rejected(fields: {error: {condition: string; description?: string}}): {described(): unknown}
}

export const types = require('rhea/lib/types.js') as TypesModule
export const messageCodec = require('rhea/lib/message.js') as MessageModule

const HEADER = 0x70
const DELIVERY_ANNOTATIONS = 0x71
const MESSAGE_ANNOTATIONS = 0x72
const PROPERTIES = 0x73
const APPLICATION_PROPERTIES = 0x74
const FOOTER = 0x78

/** One message as stored: mutable parts decoded, the bare message as raw bytes. */
export interface MessageParts {
  header: {durable?: boolean; priority?: number; ttl?: number}
  /** The sender's message annotations as a typed map (symbol keys), without broker-set ones. */
  annotations: Typed | undefined
  properties: Buffer
  /** Application properties as a typed described map, so entries can be added without retyping. */
  applicationProperties: Typed | undefined
  /** Body sections and footer, exactly as sent. */
  body: Buffer
  footer: Buffer
}

/** Splits an encoded AMQP message into its sections. */
export function parseMessage(encoded: Buffer): MessageParts {
  const reader = new types.Reader(encoded)
  const parts: MessageParts = {header: {}, annotations: undefined, properties: Buffer.alloc(0), applicationProperties: undefined, body: Buffer.alloc(0), footer: Buffer.alloc(0)}
  const bodies: Buffer[] = []
  while (reader.remaining() > 0) {
    const start = reader.position
    const section = reader.read()
    const raw = encoded.subarray(start, reader.position)
    const code = Number(section.descriptor?.value)
    if (code === HEADER) {
      const fields = (section.value as Typed[] | undefined) ?? []
      parts.header = {durable: fields[0]?.value as boolean | undefined, priority: fields[1]?.value as number | undefined, ttl: fields[2]?.value as number | undefined}
    } else if (code === DELIVERY_ANNOTATIONS) {
      // Hop-by-hop: not stored.
    } else if (code === MESSAGE_ANNOTATIONS) {
      parts.annotations = section
    } else if (code === PROPERTIES) {
      parts.properties = Buffer.from(raw)
    } else if (code === APPLICATION_PROPERTIES) {
      parts.applicationProperties = section
    } else if (code === FOOTER) {
      parts.footer = Buffer.from(raw)
    } else {
      bodies.push(Buffer.from(raw))
    }
  }
  parts.body = Buffer.concat(bodies)
  return parts
}

/**
 * Gives a message without a message-id one (Service Bus assigns an id to every message; the
 * SDK's lock renewer relies on it). The properties section is re-encoded only in that case.
 */
export function ensureMessageId(parts: MessageParts, newId: () => string): MessageParts {
  let fields: Array<Typed | null> = []
  if (parts.properties.length > 0) {
    const section = new types.Reader(parts.properties).read()
    fields = [...((section.value as Array<Typed | null> | undefined) ?? [])]
    const id = fields[0]
    if (id !== undefined && id !== null && id.value !== null && id.value !== undefined) return parts
  }
  fields[0] = types.wrap_string(newId())
  for (let i = 0; i < fields.length; i++) if (fields[i] === undefined) fields[i] = null
  return {...parts, properties: encodeTyped(types.described(types.wrap_ulong(PROPERTIES), types.wrap_list(fields)))}
}

/** A described map's entries as [key, value] typed pairs. */
function entries(map: Typed | undefined): Array<[Typed, Typed]> {
  const flat = (map?.value as Typed[] | undefined) ?? []
  const out: Array<[Typed, Typed]> = []
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i], flat[i + 1]])
  return out
}

/** The message annotations the sender set, unwrapped (for reading x-opt-scheduled-enqueue-time). */
export function annotationValue(parts: MessageParts, key: string): unknown {
  for (const [k, v] of entries(parts.annotations)) if (k.value === key) return types.unwrap(v)
  return undefined
}

/** Application property names with their AMQP type names, for tests that check native typing. */
export function applicationPropertyTypes(parts: MessageParts): Record<string, {type: string; value: unknown}> {
  const out: Record<string, {type: string; value: unknown}> = {}
  for (const [k, v] of entries(parts.applicationProperties)) out[String(k.value)] = {type: v.type.name, value: types.unwrap(v)}
  return out
}

/** A copy of the parts with string application properties added (dead-lettering records its reason so). */
export function withApplicationProperties(parts: MessageParts, added: Record<string, string>): MessageParts {
  const kept = entries(parts.applicationProperties).filter(([k]) => !(String(k.value) in added))
  const flat: Typed[] = kept.flat()
  for (const [key, value] of Object.entries(added)) flat.push(types.wrap_string(key), types.wrap_string(value))
  const map = types.wrap_map({})
  map.value = flat
  return {...parts, applicationProperties: types.described(types.wrap_ulong(APPLICATION_PROPERTIES), map)}
}

export interface DeliveryStamp {
  deliveryCount: number
  /** Broker-set annotations (x-opt-…) as typed values. */
  annotations: Record<string, Typed | undefined>
  omitBody?: boolean
}

/** Encodes the stored message for a transfer or a peek, with the broker's header and annotations. */
export function encodeMessage(parts: MessageParts, stamp: DeliveryStamp): Buffer {
  const writer = new types.Writer()
  const header = [
    types.wrap_boolean(parts.header.durable ?? false),
    types.wrap_ubyte(parts.header.priority ?? 4),
    parts.header.ttl === undefined || parts.header.ttl === null ? null : types.wrap_uint(parts.header.ttl),
    types.wrap_boolean(false),
    types.wrap_uint(stamp.deliveryCount),
  ]
  writer.write(types.described(types.wrap_ulong(HEADER), types.wrap_list(header)))
  const brokerKeys = new Set(Object.keys(stamp.annotations))
  const flat: Typed[] = entries(parts.annotations)
    .filter(([k]) => !brokerKeys.has(String(k.value)))
    .flat()
  for (const [key, value] of Object.entries(stamp.annotations)) {
    if (value === undefined) continue
    flat.push(types.wrap_symbol(key), value)
  }
  const map = types.wrap_map({})
  map.value = flat
  writer.write(types.described(types.wrap_ulong(MESSAGE_ANNOTATIONS), map))
  const head = writer.toBuffer()
  const appProps = parts.applicationProperties === undefined ? Buffer.alloc(0) : encodeTyped(parts.applicationProperties)
  return Buffer.concat([head, parts.properties, appProps, stamp.omitBody ? Buffer.alloc(0) : parts.body, parts.footer])
}

export function encodeTyped(value: Typed): Buffer {
  const writer = new types.Writer()
  writer.write(value)
  return writer.toBuffer()
}

/** The decoded view of a stored message (properties, application properties, body), for inspection. */
export function decodeParts(parts: MessageParts): DecodedMessage {
  return messageCodec.decode(encodeMessage(parts, {deliveryCount: 0, annotations: {}}))
}

/** Canonical UUID text → its 16 bytes in RFC 4122 order. */
export function uuidBytes(uuid: string): Buffer {
  return Buffer.from(uuid.replace(/-/g, ''), 'hex')
}

/** 16 RFC-order bytes → canonical UUID text. */
export function uuidText(bytes: Buffer): string {
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/**
 * Service Bus sends a lock token as a delivery tag in .NET's GUID byte order: the first three
 * groups byte-swapped. Clients reorder it back; management requests carry the RFC order.
 */
export function dotnetGuidBytes(rfc: Buffer): Buffer {
  return Buffer.from([rfc[3], rfc[2], rfc[1], rfc[0], rfc[5], rfc[4], rfc[7], rfc[6], ...rfc.subarray(8)])
}

/** A long (sequence number) as the SDK sends it: a number, or 8 big-endian bytes. */
export function longValue(value: unknown): number {
  if (typeof value === 'number') return value
  if (typeof value === 'bigint') return Number(value)
  if (Buffer.isBuffer(value)) return Number(value.readBigInt64BE(0))
  throw new Error(`not a long: ${String(value)}`)
}
