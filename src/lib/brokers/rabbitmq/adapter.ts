/**
 * RabbitMQ (AMQP 0-9-1) adapter: `amqp://user:pass@host:port/vhost`, `amqps://…`.
 *
 * Bodies travel byte for byte; the envelope fields ride AMQP properties and native-typed headers
 * (binding.ts). Publishing uses a confirm channel and resolves only once the broker
 * confirmed every message. Reading is built on consumers with manual acknowledgement, because
 * AMQP 0-9-1 has no non-destructive read: see browse() and drain.ts.
 */
import type {ChannelModel, ConfirmChannel, ConsumeMessage, Options} from 'amqplib'

import {rabbitPublishOptions} from './binding.js'
import {rabbitHeadersFor} from './app-headers.js'
import {RABBITMQ_KIND, rabbitRestoreOptions} from './restore.js'
import {BYPASS_MARKER_VALUE} from '../shared/native-values.js'
import {REPLAY_BYPASS_HEADER} from '../../envelope/fields.js'
import {AuthError, BqError, ConnectionError, QueueNotFoundError, UsageError, describeError} from '../../errors.js'
import type {BrokerAdapter, BrokerMessage, BrowseOptions, Capabilities, DeliveryCost, DrainOptions, DrainSession, InflightOptions, InflightReport, ListedQueue, NativeProperties, OutgoingMessage} from '../adapter.js'
import {rabbitmqBinding} from './binding.js'
import {RabbitDrainSession, type DrainTuning} from './drain.js'
import {probeQueue, type QueueFacts} from './probe.js'
import {MANAGEMENT_PARAM, RabbitManagement} from './management.js'
import {rabbitInflight} from './inflight.js'
import {AdapterBase} from '../shared/adapter-base.js'
import {SerialLock} from '../shared/serial-lock.js'
import {
  AMQP_NOT_FOUND,
  accessRefusal,
  amqpCode,
  brokerReason,
  checkQueueName,
  closeConnection,
  closeQuietly,
  connectRabbit,
  onceAny,
  quietChannel,
  toBrokerMessage,
  waitUntilReady,
  watchChannel,
} from './support.js'

export const RABBIT_CAPABILITIES: Capabilities = {
  // A look is a delivery: the broker flags every message a browse hands back as `redelivered`
  // (and a quorum queue would also move it and raise x-delivery-count, so browse refuses those).
  truePeek: false,
  headers: true,
  // Delayed delivery needs the rabbitmq-delayed-message-exchange plugin, which bq does not assume.
  delay: false,
  // Dead-letter exchanges (x-dead-letter-exchange); their x-death header is decoded on read.
  nativeDlq: true,
  // A publish on one channel and an ack on another are two steps; AMQP 0-9-1 transactions do not
  // make a consume+publish atomic either.
  atomicMove: false,
  // Classic queues keep order and put returned messages back in place. (Quorum queues, which
  // browse refuses, return released messages ahead of the rest with x-delivery-count raised.)
  ordered: true,
  // A queue is declared (publish declares a missing one); reading one that is not there is an error.
  queuesExist: true,
  // The broker requeues un-acked messages when the connection closes.
  afterCrash: 'broker-returns',
}

/** A browse that finds no delivery for this long asks the broker whether the queue has run dry. */
const BROWSE_IDLE_CHECK_MS = 250
/** …and gives up after this long if the broker keeps reporting ready messages that never come. */
const BROWSE_MAX_IDLE_MS = 10_000
const MAX_PREFETCH = 65_535

export interface RabbitAdapterOptions {
  /** Drain tuning, for tests and benchmarks. */
  drain?: DrainTuning
  /** --timeout's connect timeout (ms), for the adapter's and each drain's connection. */
  connectTimeoutMs?: number
  /** The command's warning path (a restore's properties RabbitMQ refuses); stderr when absent. */
  warn?: (message: string) => void
}

type WatchedChannel = Awaited<ReturnType<typeof quietChannel>>

export class RabbitAdapter extends AdapterBase<RabbitDrainSession> {
  readonly kind = 'rabbitmq'
  readonly capabilities = RABBIT_CAPABILITIES
  readonly binding = rabbitmqBinding
  /** A browse or drain waits up to 10 s for messages RabbitMQ counts but has not delivered yet. */
  readonly readWaitMs = 10_000

  private opsChannel: WatchedChannel | undefined
  private confirmChannel: (ConfirmChannel & {bqClosedBecause?: string; bqClosed?: boolean}) | undefined
  private readonly publishLock = new SerialLock()
  private readonly opsLock = new SerialLock()
  private readonly ensured = new Set<string>()
  private readonly facts = new Map<string, QueueFacts>()
  private lost: ConnectionError | undefined
  private readonly warnedDropped = new Set<string>()

  constructor(
    private readonly connection: ChannelModel,
    private readonly url: URL,
    displayUrl: string,
    private readonly options: RabbitAdapterOptions = {},
  ) {
    super(displayUrl, {name: 'RabbitMQ'})
    connection.on('close', (error?: unknown) => {
      if (this.isClosed) return
      this.lost ??= new ConnectionError(`the RabbitMQ connection to ${displayUrl} was lost${error ? ` (${brokerReason(error)})` : ''}`, error)
    })
  }

  async publish(queue: string, messages: OutgoingMessage[]): Promise<void> {
    checkQueueName(queue)
    if (messages.some((message) => message.delayMs !== undefined && message.delayMs > 0)) {
      throw new UsageError('RabbitMQ has no native delayed delivery without the delayed-message exchange plugin, which bq does not use: publish without --delay')
    }
    if (messages.length === 0) return
    await this.ensureQueue(queue)
    await this.publishLock.run(() => this.publishBatch(queue, messages))
  }

  async browse(queue: string, options: BrowseOptions): Promise<BrokerMessage[]> {
    checkQueueName(queue)
    const limit = Math.floor(options.limit)
    const offset = Math.floor(options.offset ?? 0)
    if (!(limit >= 0) || !(offset >= 0)) throw new UsageError(`browse needs a non-negative limit and offset, got limit=${options.limit} offset=${options.offset}`)
    const ready = await this.readyCount(queue)
    if (ready === undefined) throw this.notFound(queue)
    await this.requireClassic(queue, 'browse')
    // Only as many as are there: never wait for messages that do not exist.
    const want = Math.min(offset + limit, ready)
    if (limit === 0 || want <= offset) return []
    return this.take(queue, offset, want)
  }

  /** AMQP 0-9-1 has no way to list queues: the management HTTP API does it (management.ts). */
  async listQueues(): Promise<ListedQueue[]> {
    this.ensureOpen('list the queues')
    const management = new RabbitManagement(this.url, this.url.searchParams.get(MANAGEMENT_PARAM) ?? undefined)
    try {
      return await management.queues()
    } catch (error) {
      if (error instanceof BqError) throw new BqError(`cannot list the queues on ${this.displayUrl}: ${error.message}`, {code: error.code, cause: error})
      throw error
    }
  }

  /** Unacknowledged messages and consumers, from the management API (inflight.ts); the queue is checked over AMQP first. */
  async inflight(queue: string, _options: InflightOptions): Promise<InflightReport> {
    checkQueueName(queue)
    if ((await this.readyCount(queue)) === undefined) throw this.notFound(queue)
    const management = new RabbitManagement(this.url, this.url.searchParams.get(MANAGEMENT_PARAM) ?? undefined)
    let report: InflightReport | undefined
    try {
      report = await rabbitInflight(management, queue)
    } catch (error) {
      if (error instanceof BqError) throw new BqError(`cannot read what is in flight on "${queue}" on ${this.displayUrl}: ${error.message}`, {code: error.code, exitCode: error.exitCode, cause: error})
      throw error
    }
    // Deleted between the two looks.
    if (report === undefined) throw this.notFound(queue)
    return report
  }

  async count(queue: string): Promise<number> {
    checkQueueName(queue)
    const ready = await this.readyCount(queue)
    if (ready === undefined) throw this.notFound(queue)
    return ready
  }

  /**
   * A quorum queue counts every message handed back (x-delivery-count) and, with a delivery limit
   * (x-delivery-limit or a policy; RabbitMQ 4 sets 20 by default), drops or dead-letters it
   * past the limit. AMQP 0-9-1 cannot read that limit (a re-declare does not compare it, and
   * policies are not visible), so every quorum queue is treated as counting. Classic queues only
   * flag a returned message `redelivered`; streams are never drained.
   */
  async readsCostDeliveries(queue: string): Promise<DeliveryCost | undefined> {
    checkQueueName(queue)
    if ((await this.readyCount(queue)) === undefined) throw this.notFound(queue)
    let facts: QueueFacts | undefined
    try {
      facts = await this.queueFacts(queue)
    } catch (error) {
      throw this.mapError(`inspect queue "${queue}"`, error)
    }
    if (facts?.type !== 'quorum') return undefined
    return {
      queue: `RabbitMQ quorum queue "${queue}"`,
      cost: 'raises its x-delivery-count by one, toward any delivery limit the queue has (past it the broker drops or dead-letters the message)',
      alternative: 'to look at its messages first, move them to a classic queue (e.g. with a shovel) and triage that',
    }
  }

  async drain(queue: string, options: DrainOptions = {}): Promise<DrainSession> {
    this.check(queue, `drain "${queue}"`)
    const connection = await connectRabbit(this.url, this.displayUrl, `drain ${queue}`, this.options.connectTimeoutMs)
    try {
      const channel = await quietChannel(connection)
      let ready: number
      try {
        ready = (await channel.checkQueue(queue)).messageCount
      } catch (error) {
        if (amqpCode(error) === AMQP_NOT_FOUND) throw this.notFound(queue)
        throw error
      }
      // Probed even when it reports 0 ready: a stream always does.
      const facts = await this.queueFacts(queue, connection)
      if (facts?.type === 'stream') {
        throw new BqError(`RabbitMQ queue "${queue}" is a stream: consuming a stream does not remove messages, so bq cannot drain (redrive) it`, {code: 'unsupported-queue'})
      }
      if (facts === undefined || (facts.type !== 'classic' && facts.type !== 'quorum')) {
        throw new BqError(`bq could not determine the type of RabbitMQ queue "${queue}"${facts ? ` (${facts.type})` : ''}, so it does not drain it: only classic and quorum queues hand back released messages safely`, {code: 'unsupported-queue'})
      }
      const max = options.max !== undefined && options.max > 0 ? Math.floor(options.max) : 0
      const limit = max > 0 ? Math.min(max, ready) : ready
      return this.track((untrack) => new RabbitDrainSession(connection, channel, queue, this.displayUrl, limit, this.options.drain, untrack, facts.type === 'quorum'))
    } catch (error) {
      await closeConnection(connection)
      throw this.mapError(`drain "${queue}"`, error)
    }
  }

  // recover() is the base's: the broker hands un-acked messages back itself when a consumer's connection dies.

  protected async release(): Promise<void> {
    await closeQuietly(this.confirmChannel)
    await closeQuietly(this.opsChannel)
    this.confirmChannel = undefined
    this.opsChannel = undefined
    // Never waits on a broker that is gone (see closeConnection).
    await closeConnection(this.connection)
  }

  /** The queue type as probed (cached: a queue's type cannot change without deleting it). */
  async queueType(queue: string): Promise<string | undefined> {
    return (await this.queueFacts(queue))?.type
  }

  // ── publishing ────────────────────────────────────────────────────────────────────────────

  private async publishBatch(queue: string, messages: OutgoingMessage[]): Promise<void> {
    const channel = await this.getConfirmChannel()
    let returned = 0
    const onReturn = () => {
      returned++
    }
    // mandatory + this listener: a message the default exchange cannot route (the queue was
    // deleted after it was checked) comes back instead of being confirmed and silently dropped.
    channel.on('return', onReturn)
    try {
      const failures: unknown[] = []
      let pending = 0
      let sent = 0
      let sending = true
      let settle: () => void = () => undefined
      const allConfirmed = new Promise<void>((resolve) => {
        settle = resolve
      })
      // Every sent message gets exactly one verdict: ack, nack, or 'channel closed' from amqplib.
      const onConfirm = (error: unknown) => {
        if (error !== null && error !== undefined) failures.push(error)
        pending--
        if (pending === 0 && !sending) settle()
      }
      for (const message of messages) {
        if (channel.bqClosed) break
        let writable: boolean
        try {
          pending++
          sent++
          writable = channel.sendToQueue(queue, message.body, this.publishOptions(message), onConfirm)
        } catch (error) {
          // amqplib throws synchronously once the channel is closed; nothing was sent for this one.
          pending--
          sent--
          failures.push(error)
          break
        }
        // Backpressure: amqplib buffers without bound; wait for the socket to drain.
        if (!writable && !channel.bqClosed) await onceAny(channel, ['drain', 'close'])
      }
      sending = false
      if (sent < messages.length) {
        // The loop stopped early: wait for the broker's verdict on what did go out, then fail.
        if (pending > 0) await allConfirmed
        const detail = `${sent} of ${messages.length} messages were sent and none of the batch counts as published`
        if (this.lost !== undefined) throw new ConnectionError(`${this.lost.message} while publishing to "${queue}": ${detail}`, this.lost.cause)
        throw new BqError(`RabbitMQ closed the channel while publishing to "${queue}": ${detail}${channel.bqClosedBecause ? ` (${channel.bqClosedBecause})` : ''}`, {code: 'publish-failed', cause: failures[0]})
      }
      if (pending > 0) await allConfirmed
      if (failures.length > 0) {
        const detail = `${failures.length} of ${messages.length} messages were not confirmed and none of the batch counts as published`
        if (this.lost !== undefined) throw new ConnectionError(`${this.lost.message} while publishing to "${queue}": ${detail}`, this.lost.cause)
        const reason = channel.bqClosedBecause ?? describeError(failures[0])
        throw new BqError(`RabbitMQ did not confirm ${failures.length} of ${messages.length} messages published to "${queue}" (${reason}); the batch is not published`, {code: 'publish-failed', cause: failures[0]})
      }
      if (returned > 0) {
        this.ensured.delete(queue)
        throw new BqError(`RabbitMQ could not route ${returned} of ${messages.length} messages to queue "${queue}" (was it deleted?); the batch is not published`, {code: 'publish-failed'})
      }
    } catch (error) {
      throw this.mapError(`publish to "${queue}"`, error)
    } finally {
      channel.removeListener('return', onReturn)
      if (channel.bqClosed && this.confirmChannel === channel) this.confirmChannel = undefined
    }
  }

  private publishOptions(message: OutgoingMessage): Options.Publish {
    if (message.restore?.broker === RABBITMQ_KIND) return {...this.restoreOptions(message, message.restore), mandatory: true}
    let options: Options.Publish
    if (message.fields !== null) {
      options = {...rabbitPublishOptions(message.fields, {bypass: message.bypass}), mandatory: true}
    } else {
      // Not a decodable envelope (a poison body being moved): the bytes, durable, nothing projected.
      options = {contentType: 'application/json', persistent: true, mandatory: true}
      if (message.bypass) options.headers = {[REPLAY_BYPASS_HEADER]: BYPASS_MARKER_VALUE}
    }
    const headers = rabbitHeadersFor(message, options.headers)
    if (headers !== undefined) options.headers = headers
    return options
  }

  private warn(text: string): void {
    ;(this.options.warn ?? ((line: string) => process.stderr.write(`Warning: ${line}\n`)))(text)
  }

  /** A restore's properties; what RabbitMQ would refuse is left out, and said once. */
  private restoreOptions(message: OutgoingMessage, native: NativeProperties): Options.Publish {
    const connectedAs = decodeURIComponent(this.url.username) || 'guest'
    const restore = rabbitRestoreOptions(message, native, connectedAs)
    if (restore.dropped !== undefined && !this.warnedDropped.has(restore.dropped.property)) {
      this.warnedDropped.add(restore.dropped.property)
      this.warn(`${restore.dropped.property} is not restored (first: "${restore.dropped.value}"): RabbitMQ accepts only the connecting user's (${connectedAs}), so restored messages carry none`)
    }
    return restore.options
  }

  private async getConfirmChannel(): Promise<ConfirmChannel & {bqClosedBecause?: string; bqClosed?: boolean}> {
    this.assertOpen('open a publishing channel')
    if (this.confirmChannel !== undefined && !this.confirmChannel.bqClosed) return this.confirmChannel
    try {
      const channel = (await this.connection.createConfirmChannel()) as ConfirmChannel & {bqClosedBecause?: string; bqClosed?: boolean}
      watchChannel(channel)
      this.confirmChannel = channel
      return channel
    } catch (error) {
      throw this.mapError('open a publishing channel', error)
    }
  }

  /**
   * Declares a missing queue durable; an existing queue is only checked (passively), never
   * re-declared, so its arguments (type, dead-lettering, limits) are left exactly as they are.
   */
  private async ensureQueue(queue: string): Promise<void> {
    if (this.ensured.has(queue)) return
    const ready = await this.readyCount(queue)
    if (ready === undefined) {
      await this.withOps(`declare queue "${queue}"`, (channel) => channel.assertQueue(queue, {durable: true}))
    }
    this.ensured.add(queue)
  }

  // ── reading ───────────────────────────────────────────────────────────────────────────────

  /** Ready messages in a queue, or undefined when it does not exist. */
  private async readyCount(queue: string): Promise<number | undefined> {
    try {
      return await this.withOps(`check queue "${queue}"`, async (channel) => (await channel.checkQueue(queue)).messageCount, true)
    } catch (error) {
      if (error instanceof NotFound) return undefined
      throw error
    }
  }

  private async queueFacts(queue: string, connection: ChannelModel = this.connection): Promise<QueueFacts | undefined> {
    const known = this.facts.get(queue)
    if (known !== undefined) return known
    let facts: QueueFacts | undefined
    try {
      facts = await probeQueue(connection, queue)
    } catch (error) {
      // The probe re-declares the queue: a refusal here is the configure permission's.
      throw this.mapError(`inspect queue "${queue}"`, error)
    }
    if (facts !== undefined) this.facts.set(queue, facts)
    return facts
  }

  /**
   * Browsing takes messages and hands them all back. Only a classic queue puts them back where
   * they were; a quorum queue would return them with x-delivery-count raised (which counts
   * toward its delivery limit) and a stream is not consumed this way at all. So the type is
   * found first (probe.ts), without touching a message.
   */
  private async requireClassic(queue: string, action: string): Promise<void> {
    let facts: QueueFacts | undefined
    try {
      facts = await this.queueFacts(queue)
    } catch (error) {
      throw this.mapError(`inspect queue "${queue}"`, error)
    }
    if (facts?.type === 'classic') return
    if (facts?.type === 'quorum') {
      throw new BqError(`bq cannot ${action} RabbitMQ quorum queue "${queue}" without changing it: AMQP has no non-destructive read, and a quorum queue returns a looked-at message with its x-delivery-count raised (counting toward the delivery limit) and possibly out of order. Use the management UI, or drain it with a redrive`, {code: 'unsupported-queue'})
    }
    if (facts?.type === 'stream') {
      throw new BqError(`bq cannot ${action} RabbitMQ stream "${queue}": streams are read with offset-based consumers, which bq does not implement`, {code: 'unsupported-queue'})
    }
    throw new BqError(`bq could not determine the type of RabbitMQ queue "${queue}"${facts ? ` ("${facts.type}")` : ''} and only ${action}s classic queues, where returned messages keep their positions`, {code: 'unsupported-queue'})
  }

  /**
   * Consumes the first `want` messages without acking any, keeps those from `offset` on, then
   * hands every one back (nack with requeue, then channel close): a classic queue restores them
   * to their original positions, flagged `redelivered`. Nothing is acked, so each consumer's
   * prefetch is an exact cap; beyond 65,535 (the largest prefetch) a fresh consumer continues.
   */
  private async take(queue: string, offset: number, want: number): Promise<BrokerMessage[]> {
    this.assertOpen(`browse "${queue}"`)
    let channel: WatchedChannel
    try {
      channel = await quietChannel(this.connection)
    } catch (error) {
      throw this.mapError(`browse "${queue}"`, error)
    }
    const found: BrokerMessage[] = []
    let seen = 0
    let wake: (() => void) | undefined
    let cancelledByBroker = false
    try {
      while (seen < want) {
        const prefetch = Math.min(MAX_PREFETCH, want - seen)
        const capAt = seen + prefetch
        await channel.prefetch(prefetch, false)
        const onMessage = (message: ConsumeMessage | null) => {
          if (message === null) {
            cancelledByBroker = true
          } else {
            const index = seen++
            if (index >= offset) found.push(toBrokerMessage(message, String(index)))
          }
          wake?.()
        }
        const {consumerTag} = await channel.consume(queue, onMessage, {noAck: false})
        let idleSince = Date.now()
        while (seen < capAt && !cancelledByBroker && !channel.bqClosed) {
          const before = seen
          await new Promise<void>((resolve) => {
            const timer = setTimeout(() => resolve(), BROWSE_IDLE_CHECK_MS)
            wake = () => {
              clearTimeout(timer)
              resolve()
            }
          })
          wake = undefined
          if (seen > before) {
            idleSince = Date.now()
            continue
          }
          const ready = (await channel.checkQueue(queue)).messageCount
          // The queue answers that ahead of pending work; a channel-local round trip (answered
          // after the channel wrote the deliveries queued before it) lets late deliveries in.
          await channel.prefetch(prefetch, false)
          if (seen === before && (ready === 0 || Date.now() - idleSince >= BROWSE_MAX_IDLE_MS)) break
        }
        if (!cancelledByBroker) await channel.cancel(consumerTag)
        if (seen < capAt) break
      }
    } catch (error) {
      throw this.mapError(`browse "${queue}"`, channel.bqClosedBecause ? new Error(channel.bqClosedBecause) : error)
    } finally {
      if (!channel.bqClosed) {
        try {
          const readyBefore = (await channel.checkQueue(queue)).messageCount
          channel.nackAll(true)
          await waitUntilReady(channel, queue, readyBefore + seen)
        } catch {
          // Closing the channel below requeues them as well.
        }
      }
      await closeQuietly(channel)
    }
    if (cancelledByBroker) throw new BqError(`RabbitMQ cancelled the browse of queue "${queue}" (was it deleted?)`, {code: 'consumer-cancelled'})
    return found
  }

  // ── channels and errors ───────────────────────────────────────────────────────────────────

  /**
   * Runs a queue-level method on the shared operations channel. A failed passive declare makes
   * the broker close that channel, so a closed channel is replaced on the next call.
   */
  private async withOps<T>(action: string, task: (channel: WatchedChannel) => Promise<T>, notFoundIsValue = false): Promise<T> {
    return this.opsLock.run(async () => {
      this.assertOpen(action)
      try {
        if (this.opsChannel === undefined || this.opsChannel.bqClosed) this.opsChannel = await quietChannel(this.connection)
        return await task(this.opsChannel)
      } catch (error) {
        if (notFoundIsValue && (amqpCode(error) === AMQP_NOT_FOUND || /NOT_FOUND/.test(this.opsChannel?.bqClosedBecause ?? ''))) throw new NotFound()
        throw this.mapError(action, error)
      }
    })
  }

  /** A lost connection fails every later call with the ConnectionError that says so (exit 4). */
  private assertOpen(what: string): void {
    if (this.lost !== undefined) throw this.lost
    this.ensureOpen(what)
  }

  /** RabbitMQ's own queue-name rule, and the connection must be usable. */
  protected override check(queue: string, what: string): void {
    checkQueueName(queue)
    this.assertOpen(what)
  }

  /** A queue that is not there: one line, exit 1 (`queue-not-found`); publish declares instead. */
  private notFound(queue: string): QueueNotFoundError {
    let vhost = this.url.pathname.replace(/^\//, '')
    try {
      vhost = decodeURIComponent(vhost)
    } catch {
      // Shown as written.
    }
    vhost ||= '/'
    return new QueueNotFoundError(`queue "${queue}" does not exist on ${this.displayUrl} (virtual host "${vhost}")`)
  }

  /** Every failure leaves as one BqError line; a dead connection is a ConnectionError (exit 4). */
  private mapError(action: string, error: unknown): BqError {
    if (error instanceof AuthError) return error
    const refusal = accessRefusal(brokerReason(error), action, this.displayUrl, permissionFor(action))
    if (refusal !== undefined) return refusal
    if (error instanceof BqError) return error
    if (this.lost !== undefined) return this.lost
    return new BqError(`RabbitMQ could not ${action} on ${this.displayUrl}: ${brokerReason(error)}`, {cause: error})
  }
}

class NotFound extends Error {}

/** The permission the AMQP method behind an action needs, for brokers whose refusal does not say (3.10). */
function permissionFor(action: string): 'configure' | 'write' | 'read' | undefined {
  if (/^(declare|inspect)/.test(action)) return 'configure'
  if (/^publish/.test(action)) return 'write'
  if (/^(browse|drain)/.test(action)) return 'read'
  return undefined
}

/** The registry's entry point: connects (failing fast with a ConnectionError) and returns the adapter. */
export async function createRabbitAdapter(url: URL, displayUrl: string, options: RabbitAdapterOptions = {}): Promise<BrokerAdapter> {
  if (url.protocol !== 'amqp:' && url.protocol !== 'amqps:') throw new UsageError(`${displayUrl} is not an amqp:// or amqps:// URL`)
  // ?management= is bq's (the management API for listing queues), not amqplib's.
  const amqpUrl = new URL(url.href)
  amqpUrl.searchParams.delete(MANAGEMENT_PARAM)
  const connection = await connectRabbit(amqpUrl, displayUrl, 'adapter', options.connectTimeoutMs)
  return new RabbitAdapter(connection, url, displayUrl, options)
}
