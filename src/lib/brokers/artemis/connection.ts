/**
 * One AMQP 1.0 connection to Artemis through rhea, made safe for a CLI:
 *
 * - no automatic reconnect: a resent transfer could duplicate a message and a re-attached
 *   receiver would not own the deliveries of the old one, so a lost connection fails the
 *   operation (a ConnectionError, exit 4) and the broker returns what was unsettled;
 * - connecting is bounded (refused, unknown host, bad credentials and TLS failures fail at
 *   once; a silent host after CONNECT_TIMEOUT_MS);
 * - rhea reports through events and, when nobody listens, prints to the console or throws from
 *   an 'error' event; every such event has a listener here, so nothing is printed or thrown.
 */
import {randomUUID} from 'node:crypto'

import rhea from 'rhea'
import type {AmqpError, Connection, ConnectionOptions, EventContext, Receiver, ReceiverOptions, Sender, SenderOptions, Session} from 'rhea'

import {AuthError, BqError, ConnectionError, describeError} from '../../errors.js'
import type {ArtemisTarget} from './url.js'
import {serverName} from './url.js'
import {scrubSecrets} from '../shared/redact.js'
import {tlsFailureReason} from '../shared/tls.js'

const CONNECT_TIMEOUT_MS = 10_000
/** Link attach/detach and connection close answers; Artemis answers in milliseconds. */
const LINK_TIMEOUT_MS = 15_000
/** Heartbeats both ways, so a vanished peer is noticed (rhea closes after twice this idle). */
const IDLE_TIMEOUT_MS = 30_000

export interface ConnectOptions {
  /** rhea's per-session delivery buffer (default 2048); a drain needs more room (drain.ts). */
  sessionBufferSize?: number
  connectTimeoutMs?: number
}

/** rhea's events for a connection that failed or went away. */
const FAILURE_EVENTS = ['connection_error', 'connection_close', 'disconnected', 'protocol_error', 'error']

type Link = Sender | Receiver
type Listener = (error: ConnectionError) => void

export class ArtemisConnection {
  private lostError: ConnectionError | undefined
  private closing = false
  private readonly lossListeners = new Set<Listener>()

  private constructor(
    readonly connection: Connection,
    readonly displayUrl: string,
    private readonly secrets: string[],
  ) {
    for (const event of FAILURE_EVENTS) connection.on(event, (context: EventContext) => this.markLost(context))
  }

  /** Connects and waits for the broker's open; every failure is one redacted ConnectionError line. */
  static async open(target: ArtemisTarget, displayUrl: string, purpose: string, options: ConnectOptions = {}): Promise<ArtemisConnection> {
    const container = rhea.create_container({id: `bq-${process.pid}-${randomUUID()}`})
    // Link and session errors nobody listened for would be thrown from here; the owners of the
    // links see the same errors through their own listeners.
    container.on('error', () => undefined)
    const connectOptions = {
      host: target.host,
      port: target.port,
      transport: target.tls ? 'tls' : 'tcp',
      reconnect: false,
      idle_time_out: IDLE_TIMEOUT_MS,
      properties: {product: 'bq', purpose},
      ...(target.username === undefined ? {} : {username: target.username}),
      ...(target.password === undefined ? {} : {password: target.password}),
      ...(target.tls ? {servername: serverName(target.host), ...target.tlsSettings?.options} : {}),
      ...(options.sessionBufferSize === undefined ? {} : {session_buffer_size: options.sessionBufferSize}),
    } as ConnectionOptions
    const connection = container.connect(connectOptions)
    const timeoutMs = options.connectTimeoutMs ?? CONNECT_TIMEOUT_MS
    let opening = true
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => done(new Error(`timed out after ${timeoutMs / 1000}s`)), timeoutMs)
        function done(error?: unknown) {
          if (!opening) return
          opening = false
          clearTimeout(timer)
          if (error === undefined) resolve()
          else reject(error)
        }
        connection.once('connection_open', () => done())
        // These stay attached (silently, once settled): later events of a dying connection
        // must not reach an unheard emitter either.
        for (const event of FAILURE_EVENTS) connection.on(event, (context: EventContext) => done(context.error ?? context.connection?.error ?? new Error('the connection closed')))
      })
    } catch (error) {
      destroySocket(connection)
      throw openFailure(error, target, displayUrl)
    }
    return new ArtemisConnection(connection, displayUrl, target.secrets)
  }

  /** The reason the connection is gone, once it is. */
  get lost(): ConnectionError | undefined {
    return this.lostError
  }

  /** Calls `listener` once if the connection is lost (not when closed by us); returns an unsubscribe. */
  onLost(listener: Listener): () => void {
    this.lossListeners.add(listener)
    return () => this.lossListeners.delete(listener)
  }

  assertOpen(): void {
    if (this.lostError !== undefined) throw this.lostError
    if (this.closing) throw new BqError(`the Artemis connection to ${this.displayUrl} is closed`, {code: 'adapter-closed'})
  }

  /** A session of its own (own delivery ids and buffers), for links whose settlements must not mix. */
  newSession(): Session {
    this.assertOpen()
    const session = this.connection.create_session()
    session.on('session_error', () => undefined)
    session.begin()
    return session
  }

  async openSender(options: SenderOptions, session?: Session): Promise<Sender> {
    this.assertOpen()
    const sender = session === undefined ? this.connection.open_sender(options) : session.open_sender(options)
    await this.attached(sender, 'sender', () => absent(sender.target))
    return sender
  }

  async openReceiver(options: ReceiverOptions, session?: Session): Promise<Receiver> {
    this.assertOpen()
    const receiver = session === undefined ? this.connection.open_receiver(options) : session.open_receiver(options)
    await this.attached(receiver, 'receiver', () => absent(receiver.source))
    return receiver
  }

  /** Detaches a link and waits (bounded) for the broker's answer. */
  async closeLink(link: Link): Promise<void> {
    if (this.lostError !== undefined || link.is_closed()) return
    const role = link.is_receiver() ? 'receiver' : 'sender'
    link.close()
    await this.waitFor(link, [`${role}_close`, `${role}_error`], LINK_TIMEOUT_MS).catch(() => undefined)
  }

  /** Closes the connection and waits (bounded) until the broker has answered. Safe twice. */
  async close(): Promise<void> {
    if (this.closing) return
    this.closing = true
    if (this.lostError !== undefined) {
      destroySocket(this.connection)
      return
    }
    // The broker's close answers ours after everything sent before it; nothing follows it.
    const closed = new Promise<void>((resolve) => {
      const timer = setTimeout(finish, LINK_TIMEOUT_MS)
      this.connection.once('connection_close', finish)
      this.connection.once('disconnected', finish)
      function finish() {
        clearTimeout(timer)
        resolve()
      }
    })
    this.connection.close()
    await closed
    destroySocket(this.connection)
  }

  /** The broker's words for a link or connection error, scrubbed of secrets, on one line. */
  describe(error: unknown): string {
    return scrubSecrets(amqpReason(error), this.secrets)
  }

  private async attached(link: Link, role: 'sender' | 'receiver', refused: () => boolean): Promise<void> {
    const event = await this.waitFor(link, [`${role}_open`, `${role}_error`, `${role}_close`], LINK_TIMEOUT_MS)
    if (event === `${role}_open` && !refused()) {
      link.on(`${role}_error`, () => undefined)
      return
    }
    // Artemis refuses a link by attaching with no terminus and detaching at once with the reason.
    // The detach often arrives in the same read as the attach, before this wait: then it is already known.
    const detached = (link.error !== undefined && link.error !== null) || !link.is_remote_open()
    if (event === `${role}_open` && !detached) await this.waitFor(link, [`${role}_error`, `${role}_close`], LINK_TIMEOUT_MS).catch(() => undefined)
    const options = link.options as {source?: unknown; target?: unknown}
    const address = role === 'sender' ? options.target : options.source
    const name = typeof address === 'string' ? address : (address as {address?: string} | undefined)?.address
    const refusal = securityRefusal(link.error, this.describe(link.error ?? ''), `${role === 'sender' ? 'send to' : 'read'} "${name ?? '?'}" on ${this.displayUrl}`)
    if (refusal !== undefined) throw refusal
    throw new BqError(`Artemis refused a ${role} for "${name ?? '?'}" on ${this.displayUrl}: ${this.describe(link.error ?? 'no reason given')}`, {code: 'link-refused'})
  }

  /** Resolves with the first of `events` the link emits; rejects when the connection is lost or the time is up. */
  private waitFor(link: Link, events: string[], timeoutMs: number): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const handlers = events.map((event) => [event, () => done(undefined, event)] as const)
      const timer = setTimeout(() => done(new BqError(`Artemis did not answer within ${timeoutMs / 1000}s on ${this.displayUrl}`, {code: 'timeout'})), timeoutMs)
      const unsubscribe = this.onLost((error) => done(error))
      for (const [event, handler] of handlers) link.on(event, handler)
      if (this.lostError !== undefined) done(this.lostError)
      function done(error?: Error, event?: string) {
        clearTimeout(timer)
        unsubscribe()
        for (const [name, handler] of handlers) link.removeListener(name, handler)
        if (error !== undefined) reject(error)
        else resolve(event!)
      }
    })
  }

  private markLost(context: EventContext): void {
    if (this.closing || this.lostError !== undefined) return
    const cause = context.error ?? context.connection?.error
    const reason = cause === undefined ? 'the broker closed the connection' : this.describe(cause)
    this.lostError = new ConnectionError(`lost the connection to Artemis at ${this.displayUrl}: ${reason}`, cause)
    for (const listener of [...this.lossListeners]) listener(this.lostError)
    this.lossListeners.clear()
    destroySocket(this.connection)
  }
}

/** A terminus the broker did not give: missing, null, or rhea's typed AMQP null (how Artemis refuses an attach). */
function absent(terminus: unknown): boolean {
  if (terminus === null || terminus === undefined) return true
  return typeof terminus === 'object' && 'type' in terminus && 'value' in terminus && (terminus as {value: unknown}).value === null
}

/** Credit the receiver has granted and the broker not yet used (rhea tracks it; its typings omit it). */
export function creditOf(receiver: Receiver): number {
  return (receiver as Receiver & {credit: number}).credit
}

/** Resolves after rhea has written what the current tick queued (it flushes on process.nextTick). */
export function flushed(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve))
}

/**
 * Ends the socket and rhea's heartbeat timers. rhea clears its timers only when the socket ends
 * in an orderly way; a pending heartbeat timer would keep the process alive for a minute.
 */
function destroySocket(connection: Connection): void {
  const internals = connection as {socket?: {destroy(): void}} & Record<string, unknown>
  for (const timer of ['heartbeat_in', 'heartbeat_out', 'abort_idle', 'scheduled_reconnect']) {
    const handle = internals[timer]
    if (handle !== undefined) clearTimeout(handle as NodeJS.Timeout)
  }
  try {
    internals.socket?.destroy()
  } catch {
    // Already gone.
  }
}

/** An AMQP error (condition + description), a socket error or anything else, on one line. */
export function amqpReason(error: unknown): string {
  const amqp = error as (AmqpError & {code?: unknown}) | undefined
  if (amqp !== undefined && amqp !== null && typeof amqp === 'object' && (typeof amqp.condition === 'string' || typeof amqp.description === 'string')) {
    const text = [amqp.description, amqp.condition === undefined ? undefined : `(${amqp.condition})`].filter((part) => part !== undefined && part !== '').join(' ')
    return text.replace(/\s+/g, ' ').trim()
  }
  return describeError(error).replace(/\s+/g, ' ').trim()
}

/**
 * Why the connection did not open, as the error that says so: a failed TLS handshake (exit 4,
 * naming the option that fixes it), refused credentials (exit 6, naming the user, never the
 * password), anything else a ConnectionError (exit 4).
 */
function openFailure(error: unknown, target: ArtemisTarget, displayUrl: string): BqError {
  const tls = target.tls ? tlsFailureReason(error, target.tlsSettings) : undefined
  if (tls !== undefined) return new ConnectionError(`cannot connect to Artemis at ${displayUrl}: ${tls}`, error, 'tls')
  let reason = scrubSecrets(connectFailure(error), target.secrets)
  // A TLS acceptor waits for a handshake that a plain AMQP header never starts: the open just times out.
  if (!target.tls && /^timed out/.test(reason)) reason += ' (if that port speaks TLS, use artemis+ssl://)'
  const condition = (error as {condition?: unknown} | undefined)?.condition
  if (condition === 'amqp:unauthorized-access' || /AMQ229031|unable to validate user/i.test(reason)) {
    const who = target.username === undefined ? 'without a user name (anonymous)' : `as user "${target.username}"`
    return new AuthError(`Artemis at ${displayUrl} refused the login ${who}: wrong user name or password`, 'auth', error)
  }
  return new ConnectionError(`cannot connect to Artemis at ${displayUrl}: ${reason}`, error)
}

/**
 * Artemis's security refusals (AMQ229032 "does not have permission", AMQ229031, the AMQP
 * condition amqp:unauthorized-access) as a permission error (exit 6) naming what was refused;
 * undefined for anything else. `described` is the broker's text, already scrubbed.
 */
export function securityRefusal(error: unknown, described: string, what: string): AuthError | undefined {
  const condition = (error as {condition?: unknown} | undefined)?.condition
  if (condition !== 'amqp:unauthorized-access' && !/AMQ22903[12]|does not have permission/i.test(described)) return undefined
  const permission = /permission='([A-Z_]+)'/.exec(described)?.[1]
  const user = /User: (\S+) does not have/.exec(described)?.[1]
  const named = permission === undefined ? '' : ` (the ${permission.toLowerCase()} permission${user === undefined ? '' : ` for user ${user}`})`
  return new AuthError(`Artemis refused to ${what}${named}: ${described}`, 'permission', error)
}

function connectFailure(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  const condition = (error as {condition?: unknown} | undefined)?.condition
  if (code === 'ECONNREFUSED') return 'connection refused'
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found'
  if (code === 'ETIMEDOUT') return 'timed out'
  if (code === 'ECONNRESET') return 'the connection was reset (is this an AMQP port, and TLS only with artemis+ssl://?)'
  if (condition === 'amqp:unauthorized-access') return 'authentication failed (the broker refused the user name or password)'
  return amqpReason(error)
}

/** How long to wait for the broker's answer to a drain once deliveries have used the credit up. */
const DRAIN_ANSWER_GRACE_MS = 200

/**
 * Sends a drain request and resolves once it is over. The broker answers every drain with a flow
 * (rhea: receiver_drained) that sets the link's credit to 0. When deliveries use the credit up
 * first, that answer is still on its way: granting new credit before it arrives would let it
 * zero the new grant in rhea's books while the broker still honours it, so later transfers come
 * "beyond credit" and a read that then finds rhea's credit at 0 ends early, short of the queue's
 * end (seen under load). So the answer is awaited, with a short grace: Artemis sends none when
 * the request reaches it after the credit is gone, and when it does answer, the flow follows the
 * last transfer on the same connection. `onWaiter` receives what ends the wait (the drained event, a
 * failure, a close); `onSpent` what the delivery handler calls when the credit reaches 0.
 */
export function drainOnce(receiver: Receiver, onWaiter: (waiter: () => void) => void, onSpent: (spent: () => void) => void): Promise<void> {
  return new Promise<void>((resolve) => {
    let grace: ReturnType<typeof setTimeout> | undefined
    const done = () => {
      clearTimeout(grace)
      resolve()
    }
    onWaiter(done)
    onSpent(() => {
      grace ??= setTimeout(done, DRAIN_ANSWER_GRACE_MS)
    })
    receiver.drain_credit()
  })
}
