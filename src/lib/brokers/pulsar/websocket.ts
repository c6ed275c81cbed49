/**
 * Pulsar's WebSocket API, as bq uses it (the `ws` package; JSON text frames, payloads base64):
 * opening a producer, reader or consumer socket with the token, turning a refused upgrade into a
 * one-line error, and a small inbox that hands incoming messages out one await at a time.
 */
import WebSocket from 'ws'

import {BqError, ConnectionError, describeError} from '../../errors.js'
import {scrubSecrets} from '../shared/redact.js'
import {tlsFailureReason} from '../shared/tls.js'
import {pulsarRefusal} from './web-tls.js'
import {BrokerNotReadyError, NOT_READY_STATUSES, notReadyReason, untilReady} from './not-ready.js'
import type {PulsarTarget} from './url.js'

/** A message as the consumer and reader endpoints deliver it. */
export interface WsMessage {
  messageId: string
  payload: string
  properties?: Record<string, string>
  publishTime?: string
  redeliveryCount?: number
  key?: string
  eventTime?: string
}

const OPEN_TIMEOUT_MS = 30_000
/** How long a not-ready broker is waited for without --timeout (the admin API's default too). */
const OPERATION_TIMEOUT_MS = 30_000

/** The broker answered the upgrade with 409: an exclusive subscription already has a consumer. */
export class ConsumerBusyError extends BqError {
  constructor(message: string) {
    super(message, {code: 'consumer-busy'})
    this.name = 'ConsumerBusyError'
  }
}

/**
 * Opens `path` (e.g. `/ws/v2/reader/persistent/public/default/orders?…`) and resolves once it is
 * open. `onMessage` is attached before the handshake: a reader or consumer starts pushing at once,
 * and frames that arrive with the upgrade response are emitted before a caller could attach it.
 */
export async function openSocket(target: PulsarTarget, displayUrl: string, path: string, what: string, onMessage?: (data: WebSocket.RawData) => void): Promise<WebSocket> {
  // A broker still loading the topic (just restarted) refuses the upgrade with a 5xx: tried again
  // within the operation timeout (not-ready.ts).
  const waitMs = target.timeouts?.operationMs ?? OPERATION_TIMEOUT_MS
  const outcome = await untilReady(
    () => openSocketOnce(target, displayUrl, path, what, onMessage).then((socket) => ({socket}), (error: unknown) => ({error})),
    (result) => 'error' in result && result.error instanceof NotReadyUpgrade,
    waitMs,
  )
  if ('socket' in outcome) return outcome.socket
  if (outcome.error instanceof NotReadyUpgrade) {
    throw new BrokerNotReadyError(`cannot ${what} on ${displayUrl}: ${notReadyReason(outcome.error.status, waitMs)}: ${outcome.error.reason}`)
  }
  throw outcome.error
}

/** An upgrade refused with a 5xx (see openSocket). */
class NotReadyUpgrade extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
  ) {
    super(`HTTP ${status} ${reason}`)
  }
}

function openSocketOnce(target: PulsarTarget, displayUrl: string, path: string, what: string, onMessage?: (data: WebSocket.RawData) => void): Promise<WebSocket> {
  const headers: Record<string, string> = {}
  if (target.token !== undefined) headers.authorization = `Bearer ${target.token}`
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(target.wsBase + path, {headers, handshakeTimeout: target.timeouts?.connectMs ?? OPEN_TIMEOUT_MS, perMessageDeflate: false, ...target.tls?.options})
    if (onMessage !== undefined) socket.on('message', onMessage)
    let settled = false
    const fail = (error: Error) => {
      if (settled) return
      settled = true
      socket.removeAllListeners()
      // Swallow the late 'error' a terminated socket may still emit.
      socket.on('error', () => undefined)
      socket.terminate()
      reject(error)
    }
    socket.once('open', () => {
      if (settled) return
      settled = true
      socket.removeAllListeners('unexpected-response')
      resolve(socket)
    })
    socket.once('unexpected-response', (_request, response) => {
      let body = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => {
        if (body.length < 2000) body += chunk
      })
      response.on('end', () => fail(upgradeError(response.statusCode ?? 0, body, target, displayUrl, what)))
      response.on('error', () => fail(upgradeError(response.statusCode ?? 0, body, target, displayUrl, what)))
    })
    socket.once('error', (error: Error) => {
      const handshake = tlsFailureReason(error, target.tls)
      if (handshake !== undefined) return fail(new ConnectionError(`cannot ${what}: the Pulsar WebSocket API of ${displayUrl}: ${handshake}`, error, 'tls'))
      const code = (error as NodeJS.ErrnoException).code
      const reason = code === 'ECONNREFUSED' ? 'connection refused' : scrubSecrets(describeError(error), target.secrets)
      fail(new ConnectionError(`cannot ${what}: the Pulsar WebSocket API of ${displayUrl} is unreachable (${reason})`, error))
    })
  })
}

function upgradeError(status: number, body: string, target: PulsarTarget, displayUrl: string, what: string): Error {
  // Jetty answers with an HTML error page; the reason is in its <title> or first line.
  const text = /<title>([^<]*)<\/title>/i.exec(body)?.[1] ?? /<p>([^<]*)<\/p>/i.exec(body)?.[1] ?? body.split('\n')[0]
  const reason = scrubSecrets(text.replace(/\s+/g, ' ').trim().slice(0, 300), target.secrets) || `HTTP ${status}`
  const refusal = pulsarRefusal(status, reason, what, displayUrl, target.token !== undefined)
  if (refusal !== undefined) return refusal
  if (status === 409) return new ConsumerBusyError(`cannot ${what} on ${displayUrl}: ${reason}`)
  if (status === 404) return new BqError(`cannot ${what} on ${displayUrl}: HTTP 404 (is webSocketServiceEnabled=true on the broker?) ${reason}`)
  if (NOT_READY_STATUSES.has(status)) return new NotReadyUpgrade(status, reason)
  return new BqError(`cannot ${what} on ${displayUrl}: HTTP ${status} ${reason}`)
}

/** Why a socket closed, in words, for errors. */
export function closeReason(code: number, reason: string): string {
  if (code === 1009) return 'a message was larger than the broker accepts in one WebSocket frame (webSocketMaxTextFrameSize)'
  return `closed with code ${code}${reason === '' ? '' : `: ${reason}`}`
}

/**
 * Incoming JSON messages of a reader or consumer socket, handed out one at a time. A socket that
 * closes or fails makes every later `receive` throw a ConnectionError.
 */
export class Inbox {
  private readonly queue: WsMessage[] = []
  private waiter: (() => void) | undefined
  private failure: Error | undefined
  closedByUs = false

  private constructor(
    readonly socket: WebSocket,
    private readonly describe: string,
  ) {}

  /** Opens a reader or consumer socket whose every frame lands in the inbox. */
  static async open(target: PulsarTarget, displayUrl: string, path: string, what: string, describe: string): Promise<Inbox> {
    // Frames that arrive before the inbox exists wait here, in order.
    const early: WebSocket.RawData[] = []
    const sink: {inbox?: Inbox} = {}
    const socket = await openSocket(target, displayUrl, path, what, (data) => {
      if (sink.inbox === undefined) early.push(data)
      else sink.inbox.push(data)
    })
    const inbox = new Inbox(socket, describe)
    for (const data of early) inbox.push(data)
    sink.inbox = inbox
    inbox.watch()
    return inbox
  }

  private push(data: WebSocket.RawData): void {
    try {
      this.queue.push(JSON.parse(data.toString()) as WsMessage)
    } catch (error) {
      this.failure ??= new BqError(`${this.describe}: the broker sent a frame that is not JSON (${describeError(error)})`)
    }
    this.wake()
  }

  private watch(): void {
    this.socket.on('close', (code, reason) => {
      if (!this.closedByUs) this.failure ??= new ConnectionError(`${this.describe}: the WebSocket ${closeReason(code, reason.toString())}`)
      this.wake()
    })
    this.socket.on('error', (error) => {
      this.failure ??= new ConnectionError(`${this.describe}: ${describeError(error)}`, error)
      this.wake()
    })
  }

  /** Messages received and not handed out yet. */
  get buffered(): number {
    return this.queue.length
  }

  /** The next message, or undefined when none came within `timeoutMs`. */
  async receive(timeoutMs: number): Promise<WsMessage | undefined> {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const message = this.queue.shift()
      if (message !== undefined) return message
      if (this.failure !== undefined) throw this.failure
      const left = deadline - Date.now()
      if (left <= 0) return undefined
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.waiter = undefined
          resolve()
        }, left)
        this.waiter = () => {
          clearTimeout(timer)
          this.waiter = undefined
          resolve()
        }
      })
    }
  }

  /** Sends a JSON frame and resolves once it was written to the socket. */
  send(frame: unknown): Promise<void> {
    if (this.failure !== undefined) return Promise.reject(this.failure)
    return new Promise((resolve, reject) => {
      this.socket.send(JSON.stringify(frame), (error) => {
        if (error) reject(new ConnectionError(`${this.describe}: ${describeError(error)}`, error))
        else resolve()
      })
    })
  }

  /** The error that ended the socket, if it ended. */
  get error(): Error | undefined {
    return this.failure
  }

  /**
   * Closes the socket; resolves true when the broker answered the close frame, which it reads
   * after every frame bq sent before it, false when the socket was lost or had to be cut.
   */
  async close(): Promise<boolean> {
    this.closedByUs = true
    return closeSocket(this.socket)
  }

  private wake(): void {
    this.waiter?.()
  }
}

/**
 * Closes a socket cleanly, terminating it if the close handshake does not finish in time.
 * Resolves true when the handshake finished (the peer's close frame came back).
 */
export async function closeSocket(socket: WebSocket, graceMs = 5000): Promise<boolean> {
  if (socket.readyState === WebSocket.CLOSED) return false
  // A close the peer began (CLOSING already) is not an answer to ours.
  const ours = socket.readyState === WebSocket.OPEN
  return new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => {
      socket.terminate()
      resolve(false)
    }, graceMs)
    socket.once('close', (code) => {
      clearTimeout(timer)
      // bq closes with 1000 and the broker echoes it; 1006 means no close frame came back.
      resolve(ours && code === 1000)
    })
    socket.on('error', () => undefined)
    if (socket.readyState === WebSocket.CONNECTING) socket.terminate()
    else socket.close(1000)
  })
}
