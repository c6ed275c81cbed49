/**
 * ActiveMQ Artemis adapter over AMQP 1.0 (rhea): `artemis://user:pass@host:port`,
 * `artemis+ssl://…` for TLS.
 *
 * A bq queue is an Artemis address with one ANYCAST queue of the same name; links ask for the
 * `queue` capability, so Artemis's default auto-create settings make both on first publish.
 * Bodies travel as one AMQP data section, byte for byte; the binding's projection rides the
 * annotations, properties and `bq_` application properties (message.ts).
 *
 * Reading is native: a browser (`distribution-mode: copy`) is a true peek, and a drain is a
 * consumer with manual settlement (drain.ts). Counts come from the management API over
 * AMQP (management.ts): ready = messageCount − deliveringCount − scheduledCount. Without
 * the `manage` permission, counts fall back to browsing the whole queue.
 *
 * What Artemis 2.40.0 did when measured (test/brokers/artemis/adapter.test.ts):
 * - `released` returns a message with its delivery count unchanged, at its original position
 *   (Artemis re-inserts returned messages in message-id order, whatever order they come back in);
 * - a dropped connection returns unsettled messages too, sometimes counting a failed delivery
 *   (delivery-count + 1, toward max-delivery-attempts), sometimes not, depending on timing;
 * - a browsed copy carries one less than the delivery count a consumer would see (see
 *   message.ts);
 * - after max-delivery-attempts (default 10) a message moves to the address's dead-letter
 *   address (`DLQ`), annotated with `x-opt-ORIG-ADDRESS`/`x-opt-ORIG-QUEUE`.
 */
import {BqError, QueueNotFoundError, UsageError} from '../../errors.js'
import type {BrokerAdapter, BrokerMessage, BrowseOptions, Capabilities, DrainOptions, DrainSession, InflightOptions, InflightReport, ListedQueue, OutgoingMessage} from '../adapter.js'
import {AdapterBase} from '../shared/adapter-base.js'
import {EmptyDrainSession} from '../shared/drain-guard.js'
import {artemisBinding} from './binding.js'
import {ArtemisBrowser} from './browse.js'
import {ArtemisConnection} from './connection.js'
import {ArtemisDrainSession, DEFAULT_SESSION_BUFFER, type ArtemisDrainTuning} from './drain.js'
import {artemisInflight} from './inflight.js'
import {ArtemisManagement, type ManagementReply} from './management.js'
import {toBrokerMessage} from './message.js'
import {ArtemisPublisher} from './publish.js'
import {parseArtemisUrl, type ArtemisTarget} from './url.js'
import {checkBrowse} from '../shared/check-arguments.js'

export const ARTEMIS_CAPABILITIES: Capabilities = {
  // Queues (topics, entities) exist apart from their messages: reading a missing one is an error.
  queuesExist: true,
  truePeek: true,
  headers: true,
  delay: true,
  nativeDlq: true,
  // A transfer to one queue and the settlement of a delivery from another are two steps; bq does
  // not use AMQP transactions (Artemis's coordinator would be needed on both links).
  atomicMove: false,
  // Unsettled deliveries go back to the queue when the broker sees the connection gone.
  afterCrash: 'broker-returns',
}

/** A browse cursor left idle longer than this is not continued: the next page starts afresh. */
const CURSOR_IDLE_MS = 30_000
/** Messages per read when counting by browsing. */
const COUNT_CHUNK = 1000
/** Queues Artemis keeps for itself: management and notification plumbing, temporary reply queues. */
const ARTEMIS_INTERNAL_QUEUE = /^(\$sys\.|activemq\.|notif\.)|^[0-9a-f]{8}-[0-9a-f]{4}-/

export interface ArtemisAdapterOptions {
  /** Drain tuning, for tests and benchmarks. */
  drain?: ArtemisDrainTuning
  connectTimeoutMs?: number
}

type QueueStats = {exists: false} | {exists: true; ready: number}

class ArtemisAdapter extends AdapterBase<ArtemisDrainSession> {
  readonly kind = 'artemis'
  readonly capabilities = ARTEMIS_CAPABILITIES
  readonly binding = artemisBinding

  private readonly publisher: ArtemisPublisher
  private management: Promise<ArtemisManagement | undefined> | undefined
  private managementWorks: Promise<boolean> | undefined
  private cursor: ArtemisBrowser | undefined

  constructor(
    private readonly connection: ArtemisConnection,
    private readonly target: ArtemisTarget,
    displayUrl: string,
    private readonly options: ArtemisAdapterOptions,
  ) {
    super(displayUrl, {name: 'Artemis'})
    this.publisher = new ArtemisPublisher(connection)
  }

  async publish(queue: string, messages: OutgoingMessage[]): Promise<void> {
    this.check(queue, `publish to ${queue}`)
    for (const message of messages) {
      const delay = message.delayMs
      if (delay !== undefined && !(Number.isFinite(delay) && delay >= 0)) throw new UsageError(`a delay must be a non-negative number of milliseconds, got ${delay}`)
    }
    await this.forgetCursor(queue)
    await this.publisher.publish(queue, messages)
  }

  async browse(queue: string, options: BrowseOptions): Promise<BrokerMessage[]> {
    this.check(queue, `browse ${queue}`)
    const {limit, offset} = checkBrowse(options)
    if (limit === 0) return []
    // Opening a browser on an unknown name would auto-create the queue: look first (a cursor
    // still open on it has looked already).
    if (!this.canContinue(queue, offset) && (await this.stats(queue))?.exists === false) throw this.notFound(queue)
    const cursor = await this.cursorAt(queue, offset)
    if (cursor === undefined) return []
    const page = await cursor.read(limit)
    return page.map((message, i) => toBrokerMessage(message, String(offset + i), 'browse'))
  }

  /**
   * The broker's queue names (management attribute `broker.queueNames`), without Artemis's own
   * (`$sys.…`, `activemq.…`, temporary reply queues). The dead-letter address of the catch-all
   * address settings (`#`, Artemis's default `DLQ`) marks its queue as the native DLQ.
   */
  async listQueues(): Promise<ListedQueue[]> {
    this.ensureOpen('list the queues')
    const management = await this.managementClient()
    const refused = `cannot list the queues on ${this.displayUrl}: Artemis lists queues only through its management API, and this user may not use it (give it the "manage" permission on activemq.management)`
    if (management === undefined) throw new BqError(refused, {code: 'cannot-list-queues'})
    const names = await management.attribute('broker', 'queueNames').catch((error: unknown) => {
      if (error instanceof BqError && error.code === 'management-refused') throw new BqError(refused, {code: 'cannot-list-queues', cause: error})
      throw error
    })
    if (!names.ok || !Array.isArray(names.value)) throw new BqError(`${refused}: ${String(names.value)}`, {code: 'cannot-list-queues'})
    const deadLetterAddress = await this.defaultDeadLetterAddress(management)
    return (names.value as unknown[])
      .filter((name): name is string => typeof name === 'string' && !ARTEMIS_INTERNAL_QUEUE.test(name))
      .sort()
      .map((queue) => (queue === deadLetterAddress ? {queue, nativeDeadLetterFor: []} : {queue}))
  }

  /** The `deadLetterAddress` of the `#` address settings; undefined when there is none or it cannot be read. */
  private async defaultDeadLetterAddress(management: ArtemisManagement): Promise<string | undefined> {
    const reply = await management.invoke('broker', 'getAddressSettingsAsJSON', ['#']).catch(() => undefined)
    if (reply?.ok !== true || typeof reply.value !== 'string') return undefined
    try {
      const settings = JSON.parse(reply.value) as {DLA?: unknown; deadLetterAddress?: unknown}
      const address = settings.DLA ?? settings.deadLetterAddress
      return typeof address === 'string' && address !== '' ? address : undefined
    } catch {
      return undefined
    }
  }

  async count(queue: string): Promise<number> {
    this.check(queue, `count ${queue}`)
    const stats = await this.settledStats(queue)
    if (stats === undefined) return this.countByBrowsing(queue)
    if (!stats.exists) throw this.notFound(queue)
    return stats.ready
  }

  /** Delivering, scheduled and consumer counts from management (inflight.ts); without management there are none to show. */
  async inflight(queue: string, _options: InflightOptions): Promise<InflightReport> {
    this.check(queue, `read what is in flight on ${queue}`)
    const management = await this.managementClient()
    if (management === undefined) {
      throw new BqError(`cannot read what is in flight on "${queue}" on ${this.displayUrl}: Artemis gives its delivering and scheduled counts only through its management API, which did not open for this user`, {code: 'cannot-count-inflight'})
    }
    const report = await artemisInflight({management, queue, managementAnswers: () => this.managementAnswers(management), where: this.displayUrl})
    if (report === undefined) throw this.notFound(queue)
    return report
  }

  async drain(queue: string, options: DrainOptions = {}): Promise<DrainSession> {
    this.check(queue, `drain ${queue}`)
    const max = options.max ?? 0
    if (!Number.isSafeInteger(max) || max < 0) throw new UsageError(`drain max must be a non-negative integer, got ${max}`)
    const stats = await this.stats(queue)
    if (stats?.exists === false) throw this.notFound(queue)
    // The drain takes no more than what was ready when it started.
    const ready = stats === undefined ? await this.countByBrowsing(queue) : stats.ready
    const limit = max > 0 ? Math.min(max, ready) : ready
    if (limit === 0) return new EmptyDrainSession(`Artemis drain of "${queue}"`)
    await this.forgetCursor(queue)
    const tuning = this.options.drain ?? {}
    const connection = await ArtemisConnection.open(this.target, this.displayUrl, `drain ${queue}`, {
      sessionBufferSize: tuning.sessionBuffer ?? DEFAULT_SESSION_BUFFER,
      connectTimeoutMs: this.options.connectTimeoutMs,
    })
    try {
      const receiver = await connection.openReceiver({source: {address: queue, capabilities: ['queue']}, credit_window: 0, autoaccept: false})
      const management = stats === undefined ? undefined : await ArtemisManagement.open(connection).catch(() => undefined)
      return this.track((untrack) => new ArtemisDrainSession({connection, receiver, management, queue, limit, tuning, onClosed: untrack}))
    } catch (error) {
      await connection.close()
      throw error
    }
  }

  // recover() is the base's: Artemis returns a dead connection's unsettled deliveries to their queue itself.

  protected async release(): Promise<void> {
    await this.cursor?.close().catch(() => undefined)
    await this.publisher.close().catch(() => undefined)
    const management = await this.management?.catch(() => undefined)
    await management?.close().catch(() => undefined)
    await this.connection.close()
  }

  /**
   * An Artemis queue exists apart from its messages: reading one that does not exist is an error,
   * not an empty queue. Only management can tell (a browser would auto-create the queue), so
   * without management permission a missing queue still reads as empty.
   */
  private notFound(queue: string): QueueNotFoundError {
    return new QueueNotFoundError(`queue "${queue}" does not exist on ${this.displayUrl}`)
  }

  // ── counting ──────────────────────────────────────────────────────────────────────────────

  /** Whether the queue exists and how many messages are ready in it; undefined without management. */
  private async stats(queue: string): Promise<QueueStats | undefined> {
    const management = await this.managementClient()
    if (management === undefined) return undefined
    const resource = `queue.${queue}`
    let replies: ManagementReply[]
    try {
      replies = await Promise.all([
        management.attribute(resource, 'messageCount'),
        management.attribute(resource, 'deliveringCount'),
        management.attribute(resource, 'scheduledCount'),
      ])
    } catch (error) {
      // The broker refuses requests from a user without the permission: count without them.
      if (error instanceof BqError && error.code === 'management-refused') {
        this.management = Promise.resolve(undefined)
        return undefined
      }
      throw error
    }
    const [total, delivering, scheduled] = replies
    if (!total.ok) {
      // The reply to an unknown queue is a generic failure; it means "no such queue" only if
      // management answers otherwise.
      if (await this.managementAnswers(management)) return {exists: false}
      return undefined
    }
    const count = (reply: ManagementReply) => (reply.ok && typeof reply.value === 'number' && Number.isFinite(reply.value) ? reply.value : 0)
    // Three reads, not one snapshot: clamp what a concurrent consumer could make negative.
    return {exists: true, ready: Math.max(0, count(total) - count(delivering) - count(scheduled))}
  }

  /**
   * Artemis moves a queue's message and delivering counters at different moments while it
   * handles an acknowledgement or takes released deliveries back, so three reads can straddle one
   * such step and be off by one (a contract test read 7 ready where 6 were, right after a drain
   * closed). A count is a figure two reads in a row agree on, within a few tries 20 ms apart; a
   * queue that keeps changing gets the last read.
   */
  private async settledStats(queue: string): Promise<QueueStats | undefined> {
    let last = await this.stats(queue)
    for (let attempt = 0; attempt < 5 && last?.exists === true; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 20))
      const next = await this.stats(queue)
      if (next?.exists !== true || next.ready === last.ready) return next
      last = next
    }
    return last
  }

  private managementClient(): Promise<ArtemisManagement | undefined> {
    this.management ??= ArtemisManagement.open(this.connection).catch((error: unknown) => {
      if (this.connection.lost !== undefined) throw this.connection.lost
      void error
      return undefined
    })
    return this.management
  }

  private managementAnswers(management: ArtemisManagement): Promise<boolean> {
    this.managementWorks ??= management.attribute('broker', 'version').then(
      (reply) => reply.ok,
      () => false,
    )
    return this.managementWorks
  }

  /** The fallback without management: browse the whole queue (what browse shows is what is ready). */
  private async countByBrowsing(queue: string): Promise<number> {
    const browser = await ArtemisBrowser.open(this.connection, queue)
    try {
      let total = 0
      for (;;) {
        const chunk = await browser.read(COUNT_CHUNK)
        total += chunk.length
        if (chunk.length < COUNT_CHUNK) return total
      }
    } finally {
      await browser.close()
    }
  }

  // ── browsing ──────────────────────────────────────────────────────────────────────────────

  /** The open cursor if it stands at `offset` of this queue, else a fresh one moved there. */
  private async cursorAt(queue: string, offset: number): Promise<ArtemisBrowser | undefined> {
    if (this.canContinue(queue, offset)) return this.cursor
    await this.forgetCursor()
    const cursor = await ArtemisBrowser.open(this.connection, queue)
    this.cursor = cursor
    if (offset > 0 && (await cursor.skip(offset)) < offset) return undefined
    return cursor
  }

  private canContinue(queue: string, offset: number): boolean {
    const current = this.cursor
    return current !== undefined && current.usable && current.queue === queue && current.position === offset && Date.now() - current.lastUsed < CURSOR_IDLE_MS
  }

  /** Closes the browse cursor (of this queue only, when one is named). */
  private async forgetCursor(queue?: string): Promise<void> {
    const cursor = this.cursor
    if (cursor === undefined || (queue !== undefined && cursor.queue !== queue)) return
    this.cursor = undefined
    await cursor.close().catch(() => undefined)
  }

  /** Also fails once the adapter's connection is lost (with the reason the connection gave). */
  protected override check(queue: string, what: string): void {
    super.check(queue, what)
    this.connection.assertOpen()
  }
}

/** The registry's entry point: connects (failing fast with a ConnectionError) and returns the adapter. */
export async function createAdapter(url: URL, displayUrl: string, options: ArtemisAdapterOptions = {}): Promise<BrokerAdapter> {
  const target = parseArtemisUrl(url, displayUrl)
  const connection = await ArtemisConnection.open(target, displayUrl, 'adapter', {connectTimeoutMs: options.connectTimeoutMs})
  return new ArtemisAdapter(connection, target, displayUrl, options)
}
