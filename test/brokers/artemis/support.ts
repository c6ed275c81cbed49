/**
 * Test helpers for Artemis: management calls on a connection of the tests' own (destroying the
 * queues a test created, reading queue attributes), and a raw rhea receiver to see exactly what
 * is on the wire.
 */
import rhea from 'rhea'
import type {Connection, Message, Receiver} from 'rhea'

import {ArtemisConnection} from '../../../src/lib/brokers/artemis/connection.js'
import {ArtemisManagement} from '../../../src/lib/brokers/artemis/management.js'
import {parseArtemisUrl} from '../../../src/lib/brokers/artemis/url.js'
import {redactUrl} from '../../../src/lib/brokers/shared/redact.js'

export async function withManagement<T>(url: string, fn: (management: ArtemisManagement) => Promise<T>): Promise<T> {
  const connection = await ArtemisConnection.open(parseArtemisUrl(new URL(url), redactUrl(url)), redactUrl(url), 'test management')
  try {
    const management = await ArtemisManagement.open(connection)
    return await fn(management)
  } finally {
    await connection.close()
  }
}

/** Destroys each queue (and its address) if it exists; ignores ones that do not. */
export async function destroyQueues(url: string, queues: string[]): Promise<void> {
  await withManagement(url, async (management) => {
    for (const queue of queues) await management.invoke('broker', 'destroyQueue', [queue, true, true]).catch(() => undefined)
  })
}

/** A queue attribute through management (messageCount, deliveringCount, scheduledCount, routingType, …). */
export async function queueAttribute(url: string, queue: string, attribute: string): Promise<unknown> {
  return withManagement(url, async (management) => {
    const reply = await management.attribute(`queue.${queue}`, attribute)
    if (!reply.ok) throw new Error(`${attribute} of ${queue}: ${String(reply.value)}`)
    return reply.value
  })
}

export interface RawDelivery {
  message: Message
  delivery: {accept(): void; release(params?: object): void; modified(params?: object): void; reject(error?: object): void; id: number}
}

/** A plain rhea connection (no bq code in between) for looking at what the broker really holds. */
export class RawClient {
  private constructor(readonly connection: Connection) {}

  static async open(url: string): Promise<RawClient> {
    const parsed = new URL(url)
    const container = rhea.create_container()
    container.on('error', () => undefined)
    const connection = container.connect({
      host: parsed.hostname,
      port: Number(parsed.port || 5672),
      username: decodeURIComponent(parsed.username),
      password: decodeURIComponent(parsed.password),
      reconnect: false,
    })
    connection.on('disconnected', () => undefined)
    connection.on('connection_error', () => undefined)
    await new Promise<void>((resolve, reject) => {
      connection.once('connection_open', () => resolve())
      connection.once('disconnected', (context) => reject(context.error ?? new Error('disconnected')))
    })
    return new RawClient(connection)
  }

  /** A consumer (or, with copy, a browser) with no credit until `take` asks. */
  async receiver(queue: string, copy = false): Promise<RawReceiver> {
    const receiver = this.connection.open_receiver({
      source: {address: queue, capabilities: ['queue'], ...(copy ? {distribution_mode: 'copy' as const} : {})},
      credit_window: 0,
      autoaccept: false,
    })
    await new Promise<void>((resolve) => receiver.once('receiver_open', () => resolve()))
    return new RawReceiver(receiver)
  }

  /** Sends raw rhea messages and waits until each is settled. */
  async send(queue: string, messages: Array<Record<string, unknown>>): Promise<void> {
    const sender = this.connection.open_sender({target: {address: queue, capabilities: ['queue']}})
    await new Promise<void>((resolve) => sender.once('sendable', () => resolve()))
    await new Promise<void>((resolve) => {
      let settled = 0
      sender.on('settled', () => {
        if (++settled === messages.length) resolve()
      })
      for (const message of messages) sender.send(message as unknown as Message)
    })
    sender.close()
  }

  /** Drops the TCP connection without any AMQP goodbye, as a crash would. */
  kill(): void {
    ;(this.connection as {socket?: {destroy(): void}}).socket?.destroy()
  }

  close(): void {
    this.connection.close()
  }
}

export class RawReceiver {
  private readonly received: RawDelivery[] = []

  constructor(readonly receiver: Receiver) {
    receiver.on('message', (context) => this.received.push({message: context.message!, delivery: context.delivery as unknown as RawDelivery['delivery']}))
  }

  /** Up to `count` deliveries: grants that credit, then has the broker send what it has. */
  async take(count: number): Promise<RawDelivery[]> {
    const start = this.received.length
    this.receiver.add_credit(count)
    // The drain ends with the broker's flow, or with the last credit used (no flow is owed then).
    await new Promise<void>((resolve) => {
      const done = () => {
        this.receiver.removeListener('receiver_drained', done)
        this.receiver.removeListener('message', onMessage)
        resolve()
      }
      const onMessage = () => {
        if (this.received.length - start >= count) done()
      }
      this.receiver.on('receiver_drained', done)
      this.receiver.on('message', onMessage)
      this.receiver.drain_credit()
    })
    this.receiver.drain = false
    return this.received.slice(start)
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.receiver.once('receiver_close', () => resolve())
      this.receiver.close()
    })
  }
}

/** Waits for rhea to write what was queued (settlements go out on the next tick). */
export function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 50))
}
