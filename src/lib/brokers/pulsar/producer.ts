/**
 * Publishing over the WebSocket producer endpoint. Each message is one JSON frame carrying the
 * exact body bytes (base64), the §5 properties and a context id; the broker answers every frame
 * with `{result, messageId, context}` once the message is stored (or with `send-error:…`), in
 * any order. A batch resolves only when every message came back `ok`.
 */
import type WebSocket from 'ws'

import {pulsarProperties} from './binding.js'
import {pulsarPropertiesFor} from './app-headers.js'
import {BYPASS_MARKER_VALUE} from '../shared/native-values.js'
import {REPLAY_BYPASS_HEADER} from '../../envelope/fields.js'
import {BqError, ConnectionError, UsageError, describeError} from '../../errors.js'
import type {OutgoingMessage} from '../adapter.js'
import {closeReason, closeSocket, openSocket} from './websocket.js'
import type {PulsarTarget, Topic} from './url.js'
import {PULSAR_KIND, pulsarRestoredFrame} from './restore.js'

/** Frames in flight at once: below the broker-side producer's 1,000 pending messages. */
const WINDOW = 500
/** Pause sending while the socket holds this much unsent data. */
const HIGH_WATER_BYTES = 8 * 1024 * 1024

interface Ack {
  result?: string
  errorMsg?: string
  context?: string
  messageId?: string
}

export class PulsarProducer {
  private nextContext = 0
  private readonly waiting = new Map<string, (ack: Ack) => void>()
  private lost: Error | undefined

  private constructor(
    private readonly socket: WebSocket,
    private readonly topic: Topic,
    private readonly displayUrl: string,
  ) {
    socket.on('message', (data) => {
      let ack: Ack
      try {
        ack = JSON.parse(data.toString()) as Ack
      } catch {
        return
      }
      const settle = ack.context === undefined ? undefined : this.waiting.get(ack.context)
      if (settle === undefined) return
      this.waiting.delete(ack.context as string)
      settle(ack)
    })
    socket.on('close', (code, reason) => this.fail(new ConnectionError(`the producer connection for ${topic.local} on ${displayUrl} ${closeReason(code, reason.toString())}`)))
    socket.on('error', (error) => this.fail(new ConnectionError(`the producer connection for ${topic.local} on ${displayUrl} failed: ${describeError(error)}`, error)))
  }

  static async open(target: PulsarTarget, displayUrl: string, topic: Topic): Promise<PulsarProducer> {
    // No batching (one message per entry keeps positions and counts one-to-one) and no send
    // time-out on the broker side: a slow bookie delays the ack rather than dropping the message.
    const socket = await openSocket(target, displayUrl, `/ws/v2/producer/${topic.path}?sendTimeoutMillis=0&batchingEnabled=false`, `publish to ${topic.local}`)
    return new PulsarProducer(socket, topic, displayUrl)
  }

  get usable(): boolean {
    return this.lost === undefined
  }

  /** Sends every message and resolves once the broker stored all of them. */
  async send(messages: OutgoingMessage[]): Promise<void> {
    if (this.lost !== undefined) throw this.lost
    const frames = messages.map((message) => frameOf(message))
    let confirmed = 0
    let refused: Ack | undefined
    let inFlight = 0
    let wake: (() => void) | undefined
    const settled = () => {
      inFlight--
      wake?.()
    }
    const waitTurn = () =>
      new Promise<void>((resolve) => {
        wake = () => {
          wake = undefined
          resolve()
        }
      })
    for (const frame of frames) {
      // After a refusal or a lost connection nothing more is sent; what is in flight still settles.
      if (refused !== undefined || this.failure() !== undefined) break
      while ((inFlight >= WINDOW || this.socket.bufferedAmount > HIGH_WATER_BYTES) && this.failure() === undefined) {
        await (inFlight > 0 ? waitTurn() : new Promise((resolve) => setTimeout(resolve, 5)))
      }
      if (this.failure() !== undefined) break
      const context = String(this.nextContext++)
      inFlight++
      this.waiting.set(context, (ack) => {
        if (ack.result === 'ok') confirmed++
        else refused ??= ack
        settled()
      })
      this.socket.send(JSON.stringify({...frame, context}), (error) => {
        if (error) this.fail(new ConnectionError(`publishing to ${this.topic.local} on ${this.displayUrl}: ${describeError(error)}`, error))
      })
    }
    while (inFlight > 0 && this.failure() === undefined) await waitTurn()
    const lost = this.failure()
    if (lost !== undefined) {
      // A frame sent before the connection went may have been stored with its answer lost: unconfirmed, not unsent.
      throw new ConnectionError(`${lost.message}; ${confirmed} of ${messages.length} messages were confirmed; the rest are unconfirmed (those already sent may have been stored)`, lost)
    }
    if (refused !== undefined) {
      const reason = refused.errorMsg ?? refused.result ?? 'unknown error'
      throw new BqError(`Pulsar refused a message published to ${this.topic.local} (${reason}); ${confirmed} of ${messages.length} messages were confirmed, the rest are not published`, {code: 'publish-failed'})
    }
  }

  async close(): Promise<void> {
    this.fail(new BqError(`the producer for ${this.topic.local} is closed`))
    await closeSocket(this.socket)
  }

  /** Read through a method: the connection can fail while send() awaits. */
  private failure(): Error | undefined {
    return this.lost
  }

  private fail(error: Error): void {
    this.lost ??= error
    // Whatever still waits for an ack will never get one: settle it as not confirmed.
    for (const [context, settle] of [...this.waiting]) {
      this.waiting.delete(context)
      settle({result: 'connection-lost'})
    }
  }
}

/** The JSON frame for one message: exact bytes, projected properties, native delay. */
function frameOf(message: OutgoingMessage): Record<string, unknown> {
  if (message.restore?.broker === PULSAR_KIND) return pulsarRestoredFrame(message, message.restore)
  const delayMs = message.delayMs ?? 0
  if (!Number.isFinite(delayMs) || delayMs < 0) throw new UsageError(`delay must be a non-negative number of milliseconds, got ${delayMs}`)
  let properties: Record<string, string> = {}
  if (message.fields !== null) {
    properties = pulsarProperties(message.fields, {bypass: message.bypass, delayMs: delayMs > 0 ? delayMs : undefined})
  } else {
    // Not a decodable envelope (a poison body being moved): the bytes, with only the marker.
    if (message.bypass) properties[REPLAY_BYPASS_HEADER] = BYPASS_MARKER_VALUE
    if (delayMs > 0) properties['bq-delay'] = String(Math.round(delayMs))
  }
  const frame: Record<string, unknown> = {payload: message.body.toString('base64'), properties: pulsarPropertiesFor(message, properties)}
  if (delayMs > 0) frame.deliverAfterMs = Math.round(delayMs)
  return frame
}
