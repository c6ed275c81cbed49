/**
 * Apache Pulsar adapter: `pulsar://host:6650?admin=http://host:8080`, `pulsar+ssl://…`.
 *
 * Why WebSocket + REST instead of a Pulsar client library: the npm `pulsar-client` is a native
 * addon whose install downloads a prebuilt C++ library, and installing bq must never depend on
 * such a download. Pulsar itself serves two documented, supported APIs that need no native code
 * and ride on the broker's web port: the WebSocket API (a producer that acknowledges every stored
 * message, a durable consumer with manual acknowledgement and pull-mode flow control, and a
 * non-durable reader) and the admin REST API (stats, internal stats with cursor positions,
 * subscription creation). bq uses `ws` for the first and Node's fetch for the second.
 *
 * - publish: WebSocket producer; the body's exact bytes go base64 in the JSON frame with the §5
 *   properties (binding.ts) and `deliverAfterMs` for a delay; resolves once every message
 *   came back `ok`. Before the first publish to a topic with no subscription at all, the binding's
 *   `babelqueue` subscription is created at the latest position (`?ensure_subscription=`), because
 *   Pulsar keeps no message for a topic nobody subscribes to (without a retention policy).
 * - browse/count: the backlog of bq's subscription `bq-redrive` (or everything stored, before it
 *   exists), read through a reader: no subscription, acknowledgement or redelivery count changes
 *   (read.ts). Messages whose delivery is delayed (bq-delay) are not counted or shown.
 * - drain: that subscription, Exclusive by default, through the consumer endpoint (drain.ts).
 */
import {BqError, QueueNotFoundError, UsageError} from '../../errors.js'
import type {BrokerAdapter, BrokerMessage, BrowseOptions, Capabilities, DrainOptions, DrainSession, InflightOptions, InflightReport, ListedQueue, OutgoingMessage} from '../adapter.js'
import {AdapterBase} from '../shared/adapter-base.js'
import {pulsarBinding} from './binding.js'
import {PulsarAdmin} from './admin.js'
import {pulsarInflight} from './inflight.js'
import {CLOSE_SETTLE_MS, DRAIN_IDLE_MS, PulsarDrainSession} from './drain.js'
import {PulsarProducer} from './producer.js'
import {READ_IDLE_MS, ViewReader, notDueYet, takeView, toBrokerMessage} from './read.js'
import {parsePulsarUrl, queueOfTopic, topicOf, type PulsarTarget, type Topic} from './url.js'
import {ConsumerBusyError, Inbox} from './websocket.js'
import {checkBrowse} from '../shared/check-arguments.js'
import type {Timeouts} from '../shared/timeouts.js'

const CAPABILITIES: Capabilities = {
  // Queues (topics, entities) exist apart from their messages: reading a missing one is an error.
  queuesExist: true,
  // A reader is a non-durable cursor: looking changes no backlog, cursor or redelivery count.
  truePeek: true,
  headers: true,
  // deliverAfterMs (honoured by Shared subscriptions, the binding's default consumer type).
  delay: true,
  // Dead-letter-policy topics (`<topic>-<subscription>-DLQ`) are topics bq reads like any other.
  nativeDlq: true,
  // A publish and an acknowledgement are two steps (no transactions over the WebSocket API).
  atomicMove: false,
  // The subscription redelivers un-acked messages once the dead run's consumer is gone.
  afterCrash: 'broker-returns',
}

/** A count scans the view (exact, delay-aware) up to this many entries; above, it trusts the broker's backlog. */
const COUNT_SCAN_LIMIT = 10_000
/** The name of this process's drain consumers, by which a drain tells its own consumer in the stats. */
const CONSUMER_NAME = `bq-${process.pid}`
/** How long a drain retries while an exclusive subscription still has a consumer (a crashed run's). */
const BUSY_RETRY_MS = 15_000

export interface PulsarAdapterOptions {
  /** Idle time-outs and the busy-subscription retry window, for tests. */
  readIdleMs?: number
  drainIdleMs?: number
  busyRetryMs?: number
  /** --timeout (shared/timeouts.ts): the WebSocket handshake and the admin requests. */
  timeouts?: Timeouts
}

export function createAdapter(url: URL, displayUrl: string, options: PulsarAdapterOptions = {}): BrokerAdapter {
  return new PulsarAdapter({...parsePulsarUrl(url, displayUrl), timeouts: options.timeouts}, displayUrl, options)
}

class PulsarAdapter extends AdapterBase<PulsarDrainSession> {
  readonly kind = 'pulsar'
  readonly capabilities = CAPABILITIES
  readonly binding = pulsarBinding
  /** A read waits out an idle gap to tell an empty topic; a drain may wait for a busy subscription and, at close, for the broker to drop its consumer. */
  get readWaitMs(): number {
    return Math.max(this.options.readIdleMs ?? READ_IDLE_MS, this.options.drainIdleMs ?? DRAIN_IDLE_MS, this.options.busyRetryMs ?? BUSY_RETRY_MS, CLOSE_SETTLE_MS)
  }
  private readonly admin: PulsarAdmin
  private readonly producers = new Map<string, PulsarProducer>()
  private readonly ensured = new Set<string>()
  /** A browse that stopped mid-view, kept so the next page continues instead of re-reading. */
  private cursor: {topic: string; nextOffset: number; reader: ViewReader} | undefined

  constructor(
    private readonly target: PulsarTarget,
    displayUrl: string,
    private readonly options: PulsarAdapterOptions,
  ) {
    // A drain whose close fails may leave its acknowledgements unapplied: say so.
    super(displayUrl, {name: 'Pulsar', rethrowSessionErrors: true})
    this.admin = new PulsarAdmin(target, displayUrl)
  }

  async publish(queue: string, messages: OutgoingMessage[]): Promise<void> {
    const topic = this.topic(queue, `publish to ${queue}`)
    if (messages.length === 0) return
    await this.dropCursor(topic)
    await this.ensureSubscription(topic)
    let producer = this.producers.get(topic.full)
    if (producer === undefined || !producer.usable) {
      producer = await PulsarProducer.open(this.target, this.displayUrl, topic)
      this.producers.set(topic.full, producer)
    }
    try {
      await producer.send(messages)
    } finally {
      if (!producer.usable) this.producers.delete(topic.full)
    }
  }

  async browse(queue: string, options: BrowseOptions): Promise<BrokerMessage[]> {
    const topic = this.topic(queue, `browse ${queue}`)
    const {limit, offset} = checkBrowse(options)
    if (limit === 0) return []
    let reader: ViewReader
    let position = 0
    if (this.cursor !== undefined && this.cursor.topic === topic.full && this.cursor.nextOffset === offset) {
      reader = this.cursor.reader
      position = offset
      this.cursor = undefined
    } else {
      await this.dropCursor()
      const view = await takeView(this.admin, topic, this.target.subscription)
      if (view === undefined) throw this.notFound(topic)
      if (view.entries === 0) return []
      reader = await ViewReader.open(this.target, this.displayUrl, topic, view, this.options.readIdleMs)
    }
    const found: BrokerMessage[] = []
    let ended = false
    try {
      while (found.length < limit) {
        const next = await reader.next()
        if (next === undefined) {
          ended = true
          break
        }
        if (notDueYet(next.message)) continue
        if (position++ < offset) continue
        found.push(toBrokerMessage(next.message, next.position, this.target))
      }
    } catch (error) {
      await reader.close().catch(() => undefined)
      throw error
    }
    if (ended) await reader.close()
    else this.cursor = {topic: topic.full, nextOffset: offset + found.length, reader}
    return found
  }

  /**
   * The namespace's persistent topics (admin API), named as bq names them (short within the URL's
   * namespace); a partitioned topic's `-partition-<n>` parts are listed as they are. Topics named
   * by Pulsar's dead-letter policy (`<topic>-<subscription>-DLQ`) are its native DLQs; which topic
   * fed one cannot be told from the name, so its sources are left empty.
   */
  async listQueues(): Promise<ListedQueue[]> {
    this.ensureOpen('list the topics')
    const topics = await this.admin.topics()
    return topics
      .map((topic) => queueOfTopic(topic, this.target))
      .sort()
      .map((queue) => (queue.endsWith('-DLQ') ? {queue, nativeDeadLetterFor: []} : {queue}))
  }

  async count(queue: string): Promise<number> {
    const topic = this.topic(queue, `count ${queue}`)
    const view = await takeView(this.admin, topic, this.target.subscription)
    if (view === undefined) throw this.notFound(topic)
    if (view.entries === 0) return 0
    let total = view.entries
    if (view.entries <= COUNT_SCAN_LIMIT) {
      // Small enough to count exactly: delayed messages that are not due yet are left out.
      total = 0
      const reader = await ViewReader.open(this.target, this.displayUrl, topic, view, this.options.readIdleMs)
      try {
        for (let next = await reader.next(); next !== undefined; next = await reader.next()) {
          if (!notDueYet(next.message)) total++
        }
      } finally {
        await reader.close()
      }
    }
    // Messages an open drain of this adapter holds are not waiting in the queue.
    for (const session of this.sessions) if (session.topicFull === topic.full) total -= session.outstanding
    return Math.max(0, total)
  }

  async drain(queue: string, options: DrainOptions = {}): Promise<DrainSession> {
    const topic = this.topic(queue, `drain ${queue}`)
    const max = options.max ?? 0
    if (!Number.isSafeInteger(max) || max < 0) throw new UsageError(`drain max must be a non-negative integer, got ${max}`)
    await this.dropCursor(topic)
    // An unknown topic is an error, and is not created by looking at it.
    if ((await this.admin.internalStats(topic)) === undefined) throw this.notFound(topic)
    const {subscription} = this.target
    // The consumer creates the subscription at the earliest position when it does not exist, so
    // the drain sees what browse showed. (The admin API's create-at-earliest is a create at latest
    // and then a cursor reset, which a busy broker can fail with HTTP 412 and leave at latest.)
    const inbox = await this.openConsumer(topic)
    let backlog: number
    try {
      backlog = (await this.admin.stats(topic))?.subscriptions?.[subscription]?.msgBacklog ?? 0
    } catch (error) {
      await inbox.close().catch(() => {})
      throw error
    }
    const limit = max > 0 ? Math.min(max, backlog) : backlog
    return this.track(
      (untrack) =>
        new PulsarDrainSession({
          inbox,
          admin: this.admin,
          target: this.target,
          displayUrl: this.displayUrl,
          topic,
          consumerName: CONSUMER_NAME,
          limit,
          idleMs: this.options.drainIdleMs,
          onClose: untrack,
        }),
    )
  }

  /** Unacked, backlog and consumers per subscription, from the topic's stats (inflight.ts). */
  async inflight(queue: string, _options: InflightOptions): Promise<InflightReport> {
    const topic = this.topic(queue, `show the in-flight work of ${queue}`)
    const stats = await this.admin.stats(topic)
    if (stats === undefined) throw this.notFound(topic)
    return pulsarInflight(stats)
  }

  // recover() is the base's: the broker returns a dead consumer's un-acknowledged messages by itself; nothing is staged.

  protected async release(): Promise<void> {
    const errors: unknown[] = []
    await this.dropCursor().catch((error: unknown) => errors.push(error))
    for (const producer of this.producers.values()) await producer.close().catch((error: unknown) => errors.push(error))
    this.producers.clear()
    if (errors.length > 0) throw errors[0]
  }

  private async openConsumer(topic: Topic): Promise<Inbox> {
    const {subscription, subscriptionType} = this.target
    const params = new URLSearchParams({subscriptionType, subscriptionInitialPosition: 'Earliest', pullMode: 'true', receiverQueueSize: '1000', consumerName: CONSUMER_NAME})
    const path = `/ws/v2/consumer/${topic.path}/${encodeURIComponent(subscription)}?${params.toString()}`
    const deadline = Date.now() + (this.options.busyRetryMs ?? BUSY_RETRY_MS)
    for (;;) {
      try {
        return await Inbox.open(this.target, this.displayUrl, path, `drain ${topic.local} (subscription ${subscription})`, `draining ${topic.local} on ${this.displayUrl}`)
      } catch (error) {
        // A crashed run's consumer lingers until the broker notices its connection is gone.
        if (!(error instanceof ConsumerBusyError) || Date.now() > deadline) {
          if (error instanceof ConsumerBusyError) {
            throw new BqError(`${topic.local} is being drained by another consumer of subscription ${subscription} (another bq redrive?): ${error.message}`, {code: 'consumer-busy', cause: error})
          }
          throw error
        }
        await new Promise((resolve) => setTimeout(resolve, 250))
      }
    }
  }

  /** Makes sure what bq publishes is kept: a topic with no subscription at all gets the binding's one. */
  private async ensureSubscription(topic: Topic): Promise<void> {
    const name = this.target.ensureSubscription
    if (name === '' || this.ensured.has(topic.full)) return
    const existing = await this.admin.subscriptions(topic)
    // A producer-only role may not manage subscriptions: publishing is still its right.
    if (existing !== 'forbidden' && (existing === undefined || existing.length === 0)) await this.admin.createSubscription(topic, name)
    this.ensured.add(topic.full)
  }

  private async dropCursor(topic?: Topic): Promise<void> {
    const cursor = this.cursor
    if (cursor === undefined || (topic !== undefined && cursor.topic !== topic.full)) return
    this.cursor = undefined
    await cursor.reader.close()
  }

  /** A Pulsar topic exists apart from its messages: reading one that does not exist is an error, not an empty queue. */
  private notFound(topic: Topic): QueueNotFoundError {
    return new QueueNotFoundError(`topic ${topic.full} does not exist on ${this.displayUrl}`)
  }

  /** The topic `queue` names, once the call (`what`) is allowed. */
  private topic(queue: string, what: string): Topic {
    this.ensureOpen(what)
    return topicOf(queue, this.target, this.displayUrl)
  }

  /** Pulsar's own topic-name rule. */
  protected override check(queue: string, what: string): void {
    this.topic(queue, what)
  }
}
