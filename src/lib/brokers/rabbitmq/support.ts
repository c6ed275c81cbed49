/**
 * Plumbing shared by the RabbitMQ adapter and its drain sessions: connecting, channels that never
 * raise unhandled 'error' events, AMQP error codes, and turning a delivery into a BrokerMessage.
 */
import amqp from 'amqplib'
import type {Channel, ChannelModel, Message} from 'amqplib'

import {rabbitNativeFields} from './binding.js'
import {rabbitNativeProperties} from './restore.js'
import {rabbitAppHeaders} from './app-headers.js'
import {carried, epochMillis, nativeText, nonNegativeInt} from '../shared/native-values.js'
import type {NativeFields} from '../../envelope/fields.js'
import {AuthError, BqError, ConnectionError, describeError} from '../../errors.js'
import type {BrokerMessage} from '../adapter.js'
import {scrubSecrets} from '../shared/redact.js'
import {TLS_PARAMS, type TlsSettings, parseTlsParams, tlsFailureReason} from '../shared/tls.js'
import {PROPERTY_NAMES} from './property-names.js'

/** AMQP reply codes bq reacts to. */
export const AMQP_NOT_FOUND = 404
export const AMQP_RESOURCE_LOCKED = 405
export const AMQP_PRECONDITION_FAILED = 406
export const AMQP_ACCESS_REFUSED = 403

/** A queue name the broker accepts: a non-empty shortstr (at most 255 bytes). */
export function checkQueueName(queue: string): void {
  if (typeof queue !== 'string' || queue === '') throw new BqError('a RabbitMQ queue name must not be empty', {code: 'usage', exitCode: 2})
  if (Buffer.byteLength(queue, 'utf8') > 255) throw new BqError(`RabbitMQ queue names are at most 255 bytes: "${queue.slice(0, 40)}…"`, {code: 'usage', exitCode: 2})
}

/** The AMQP reply code amqplib attached to an error (channel or connection close), if any. */
export function amqpCode(error: unknown): number | undefined {
  const code = (error as {code?: unknown} | null | undefined)?.code
  return typeof code === 'number' ? code : undefined
}

/**
 * The broker's own words from an amqplib error, on one line: amqplib wraps them as
 * `Operation failed: X; 406 (PRECONDITION-FAILED) with message "PRECONDITION_FAILED - …"`.
 */
export function brokerReason(error: unknown): string {
  const text = describeError(error)
  const quoted = /with message "(.*)"\s*$/s.exec(text)
  return (quoted ? quoted[1] : text).replace(/\s+/g, ' ').trim()
}

/**
 * The TLS settings of an amqps:// URL (shared/tls.ts: ca, cert, key, servername, insecure);
 * undefined for amqp://, where those options are refused.
 */
export function rabbitTls(url: URL, displayUrl: string): TlsSettings | undefined {
  return parseTlsParams(url.searchParams, displayUrl, {tls: url.protocol === 'amqps:', host: url.hostname.replace(/^\[(.*)\]$/, '$1'), tlsHint: 'amqps://'})
}

/** Connects with Nagle off (amqplib leaves it on, which stalls every round trip by ~40 ms). */
export async function connectRabbit(url: URL, displayUrl: string, purpose: string, connectTimeoutMs = 10_000): Promise<ChannelModel> {
  const tls = rabbitTls(url, displayUrl)
  // The TLS options are bq's (socket options below), not amqplib's URL parameters.
  const amqpUrl = new URL(url.href)
  for (const name of TLS_PARAMS) amqpUrl.searchParams.delete(name)
  let connection: ChannelModel
  // amqplib sets the TLS server name to the host even when it is an IP address, which Node ignores
  // (it checks the certificate against the address) but warns about (DEP0123) on stderr: silenced
  // for the synchronous part of connect, where tls.connect runs.
  const quiet = process.noDeprecation
  if (tls !== undefined && tls.options.servername === undefined) process.noDeprecation = true
  try {
    let connecting: Promise<ChannelModel>
    try {
      connecting = amqp.connect(amqpUrl.href, {
        ...tls?.options,
        noDelay: true,
        timeout: connectTimeoutMs,
        // The pid tells an operator (and `rabbitmqctl list_connections client_properties`) whose connection it is.
        clientProperties: {connection_name: `bq ${purpose} (pid ${process.pid})`},
      })
    } finally {
      process.noDeprecation = quiet
    }
    connection = await connecting
  } catch (error) {
    throw connectFailure(error, url, displayUrl, tls)
  }
  // A connection-level failure is also reported by 'close' (with the error), which the owners
  // watch; this listener only keeps an 'error' event from being unhandled.
  connection.on('error', () => undefined)
  connection.on('close', () => {
    closedConnections.add(connection)
  })
  return connection
}

const closedConnections = new WeakSet<ChannelModel>()

/** The connection has closed (by us, by the broker, or because the socket went). */
export function isConnectionClosed(connection: ChannelModel): boolean {
  return closedConnections.has(connection)
}

/** How long a close may wait for the broker's close-ok before bq stops waiting (the socket is then dropped). */
const CLOSE_TIMEOUT_MS = 5000

/**
 * Closes a connection and resolves once it is closed, whatever happens meanwhile. amqplib's own
 * close() never settles when the socket goes while it waits for close-ok (it drops the callback
 * when the broker closes the connection first, e.g. `rabbitmqctl close_connection`): so it is
 * raced with the 'close' event, and after CLOSE_TIMEOUT_MS the socket is destroyed.
 */
export async function closeConnection(connection: ChannelModel): Promise<void> {
  if (isConnectionClosed(connection)) return
  await settleWithin(connection, connection.close(), () => {
    ;(connection as unknown as {connection?: {stream?: {destroy?: () => void}}}).connection?.stream?.destroy?.()
  })
}

/** Resolves when `closing` settles, when `emitter` emits 'close', or after CLOSE_TIMEOUT_MS (then runs `onTimeout`). */
function settleWithin(emitter: NodeJS.EventEmitter, closing: Promise<unknown>, onTimeout: () => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer)
      emitter.removeListener('close', done)
      resolve()
    }
    const timer = setTimeout(() => {
      onTimeout()
      done()
    }, CLOSE_TIMEOUT_MS)
    emitter.once('close', done)
    closing.then(done, done)
  })
}

/**
 * Why the connection did not open, as the error that says so: refused credentials (exit 6,
 * naming the user, never the password), a vhost the user may not open (exit 6, naming it), a
 * failed TLS handshake (exit 4, naming the option that fixes it), anything else exit 4.
 * amqplib's messages do not echo the password, but every message is scrubbed anyway: a
 * URL-encoded or raw secret must never reach a terminal.
 */
function connectFailure(error: unknown, url: URL, displayUrl: string, tls: TlsSettings | undefined): BqError {
  const secrets = [url.password, safeDecode(url.password)]
  const text = describeError(error)
  const user = url.username === '' ? 'guest' : safeDecode(url.username)
  if (amqpCode(error) === AMQP_ACCESS_REFUSED || /ACCESS[-_]REFUSED/.test(text)) {
    return new AuthError(`RabbitMQ at ${displayUrl} refused the login of user "${user}": wrong user name or password (ACCESS_REFUSED)`, 'auth', error)
  }
  // RabbitMQ closes the handshake at connection.open for an unknown or forbidden vhost.
  if ((/NOT[-_]ALLOWED/.test(text) && /vhost/i.test(text)) || /Expected ConnectionOpenOk/.test(text)) {
    return new AuthError(`RabbitMQ at ${displayUrl} refused vhost "${vhostOf(url)}" to user "${user}": it does not exist or the user has no permissions there (create it, or grant access: rabbitmqctl set_permissions -p VHOST USER CONFIGURE WRITE READ)`, 'permission', error)
  }
  const handshake = url.protocol === 'amqps:' ? tlsFailureReason(error, tls) : undefined
  if (handshake !== undefined) return new ConnectionError(`cannot connect to RabbitMQ at ${displayUrl}: ${handshake}`, error, 'tls')
  const errno = (error as NodeJS.ErrnoException | undefined)?.code
  const reason = typeof errno === 'string' ? `${errno} (${text})` : brokerReason(error)
  return new ConnectionError(`cannot connect to RabbitMQ at ${displayUrl}: ${scrubSecrets(reason, secrets)}`, error)
}

/**
 * RabbitMQ's ACCESS_REFUSED on a queue or exchange as a permission error (exit 6) naming the
 * resource and the permission kind; undefined for anything else. `reason` is the broker's text
 * (brokerReason): newer brokers name the kind (`configure access to queue 'q' in vhost 'v'
 * refused for user 'u'`), 3.10 does not (`access to queue 'q' …`), so `kind` says which one
 * the refused operation needs (queue.declare: configure, basic.publish: write, basic.consume: read).
 */
export function accessRefusal(reason: string, action: string, displayUrl: string, kind?: 'configure' | 'write' | 'read'): AuthError | undefined {
  if (!/ACCESS[-_]REFUSED/.test(reason)) return undefined
  const parts = /(?:(configure|write|read) )?access to (queue|exchange) '([^']*)' in vhost '([^']*)' refused for user '([^']*)'/.exec(reason)
  if (parts === null) return new AuthError(`RabbitMQ refused to ${action} on ${displayUrl}: ${reason}`, 'permission')
  const [, named, type, name, vhost, user] = parts
  const needed = named ?? kind
  const permission = needed === undefined ? 'permission' : `${needed} permission`
  const regex = needed === undefined ? 'configure, write or read regex' : `${needed} regex`
  return new AuthError(`RabbitMQ refused to ${action} on ${displayUrl}: user "${user}" has no ${permission} on ${type} "${name}" in vhost "${vhost}" (its ${regex} must match that name; see rabbitmqctl list_user_permissions ${user}) [${reason}]`, 'permission')
}

/** The virtual host an amqp:// URL names: its path without the first slash, "/" when empty. */
function vhostOf(url: URL): string {
  const path = url.pathname.replace(/^\//, '')
  return path === '' ? '/' : safeDecode(path)
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    return text
  }
}

/**
 * Opens a channel whose 'error' events are consumed. amqplib emits 'error' on a channel the broker
 * closes (a failed passive declare, for one); an unheard 'error' event would kill the process.
 * The reason is kept on the channel for the next caller.
 */
export async function quietChannel(connection: ChannelModel): Promise<Channel & {bqClosedBecause?: string; bqClosed?: boolean}> {
  const channel = (await connection.createChannel()) as Channel & {bqClosedBecause?: string; bqClosed?: boolean}
  watchChannel(channel)
  return channel
}

/** Attaches the 'error'/'close' bookkeeping described on quietChannel. */
export function watchChannel(channel: Channel & {bqClosedBecause?: string; bqClosed?: boolean}): void {
  channel.on('error', (error: unknown) => {
    channel.bqClosedBecause = brokerReason(error)
  })
  channel.on('close', () => {
    channel.bqClosed = true
  })
}

/**
 * Closes a channel, ignoring that it may be closed already. Never hangs: amqplib's close() never
 * settles when the connection goes while the channel waits for close-ok, so the wait also ends
 * on the channel's 'close' event (emitted however it closes) and, at the latest, after a bound.
 */
export async function closeQuietly(channel: (Channel & {bqClosed?: boolean}) | undefined): Promise<void> {
  if (channel === undefined || channel.bqClosed) return
  let closing: Promise<unknown>
  try {
    closing = channel.close()
  } catch {
    return // Already closed by the broker or with the connection: nothing left to release.
  }
  await settleWithin(channel, closing, () => undefined)
}

/** A value amqplib decoded from a field table, made JSON-friendly for `bq peek --headers`. */
export function jsonFriendly(value: unknown): unknown {
  if (value === null || value === undefined) return value ?? null
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8')
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString()
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value)
  if (value instanceof Date) return value.toISOString()
  if (Array.isArray(value)) return value.map(jsonFriendly)
  if (typeof value === 'object') {
    const typed = value as {'!'?: unknown; value?: unknown}
    // amqplib's typed-value form: timestamps (Unix seconds) and decimals keep their type tag.
    if (typeof typed['!'] === 'string' && 'value' in typed) {
      if (typed['!'] === 'timestamp') {
        const seconds = Number(typed.value)
        return Number.isFinite(seconds) ? new Date(seconds * 1000).toISOString() : jsonFriendly(typed.value)
      }
      if (typed['!'] === 'decimal') {
        const decimal = typed.value as {places?: number; digits?: number}
        if (typeof decimal?.places === 'number' && typeof decimal.digits === 'number') return decimal.digits / 10 ** decimal.places
      }
      return jsonFriendly(typed.value)
    }
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([key, inner]) => [key, jsonFriendly(inner)]))
  }
  return value
}

/** Unix seconds from an AMQP timestamp as amqplib decodes it (a number, or `{'!':'timestamp'}`). */
function amqpSeconds(value: unknown): number | undefined {
  if (value !== null && typeof value === 'object' && '!' in value && 'value' in value) return amqpSeconds((value as {value: unknown}).value)
  return nonNegativeInt(value)
}

/**
 * What RabbitMQ's dead-letter exchange recorded. `x-death` is a list, most recent death first;
 * each entry names the queue the message died in, why (`rejected`, `expired`, `maxlen`,
 * `delivery_limit`) and when (an AMQP timestamp, whole seconds).
 */
export function decodeXDeath(headers: Record<string, unknown>): NativeFields['nativeDeadLetter'] | undefined {
  const deaths = headers['x-death']
  const latest = Array.isArray(deaths) && deaths[0] !== null && typeof deaths[0] === 'object' ? (deaths[0] as Record<string, unknown>) : undefined
  const reason = nativeText(latest?.reason) ?? nativeText(headers['x-first-death-reason'])
  const originalQueue = nativeText(latest?.queue) ?? nativeText(headers['x-first-death-queue'])
  const seconds = amqpSeconds(latest?.time)
  const failedAt = seconds === undefined ? undefined : epochMillis(seconds * 1000)
  if (reason === undefined && originalQueue === undefined && failedAt === undefined) return undefined
  return carried({reason, originalQueue, failedAt})
}


/**
 * A delivery as bq shows it. `redelivered` is true for every message a browse or an earlier
 * drain handed back: RabbitMQ has no non-destructive read, so the flag is the trace a look leaves.
 */
export function toBrokerMessage(message: Message, position: string): BrokerMessage {
  const properties = message.properties
  const rawHeaders = (properties.headers ?? {}) as Record<string, unknown>
  const shown: Record<string, unknown> = {}
  for (const [key, name] of PROPERTY_NAMES) {
    const value = properties[key]
    if (value !== undefined && value !== null) shown[name] = jsonFriendly(value)
  }
  shown.headers = jsonFriendly(rawHeaders)
  shown.redelivered = message.fields.redelivered
  shown.exchange = message.fields.exchange
  shown.routing_key = message.fields.routingKey

  const native: NativeFields = {...rabbitNativeFields(properties)}
  // Quorum queues count returns in x-delivery-count (0 on a first delivery); classic queues only flag `redelivered`.
  const deliveryCount = nonNegativeInt(rawHeaders['x-delivery-count'])
  if (deliveryCount !== undefined) native.deliveryCount = deliveryCount
  const deadLetter = decodeXDeath(rawHeaders)
  if (deadLetter !== undefined) native.nativeDeadLetter = deadLetter

  const result: BrokerMessage = {body: message.content, headers: shown, native, appHeaders: rabbitAppHeaders(rawHeaders), nativeProperties: rabbitNativeProperties(properties), position}
  // RabbitMQ stamps no enqueue time itself; the message-timestamp plugin adds `timestamp_in_ms`,
  // else the publisher's `timestamp` property (whole seconds) is the best there is.
  const enqueuedAt = nonNegativeInt(rawHeaders.timestamp_in_ms) ?? (amqpSeconds(properties.timestamp) !== undefined ? amqpSeconds(properties.timestamp)! * 1000 : undefined)
  if (enqueuedAt !== undefined) result.enqueuedAt = enqueuedAt
  return result
}

/** Waits for one of several events on an emitter, then detaches every listener it attached. */
export function onceAny(emitter: NodeJS.EventEmitter, events: string[]): Promise<string> {
  return new Promise((resolve) => {
    const handlers = events.map((event) => {
      const handler = () => {
        for (const [name, fn] of handlers) emitter.removeListener(name, fn)
        resolve(event)
      }
      return [event, handler] as const
    })
    for (const [name, fn] of handlers) emitter.once(name, fn)
  })
}

/**
 * After a requeue, waits (bounded) until the queue shows the returned messages as ready.
 * RabbitMQ applies a requeue asynchronously, and a classic queue answers a passive declare ahead
 * of work already queued (it prioritises that query), so straight after `nack` or a channel close a
 * count can be short by thousands for a moment (measured: 20,000 requeued took ~0.8 s to show).
 * An operator who counts right after a redrive must not see messages "missing". Other consumers
 * may take messages meanwhile, hence the time bound instead of an exact wait.
 */
export async function waitUntilReady(channel: Channel, queue: string, atLeast: number, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const ready = (await channel.checkQueue(queue)).messageCount
    if (ready >= atLeast || Date.now() >= deadline) return
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}
