/**
 * The operation timeout, applied to every adapter the same way: each call (and each call of its
 * drain sessions) must settle within the operation timeout, or it fails with exit 4 naming the
 * broker and what bq was waiting for. Adapters also set their SDKs' own timeouts; this is the
 * backstop that holds whatever an SDK does (a socket that stays open but carries nothing
 * answers no timeout of its own in several of them).
 *
 * After one call timed out (or failed with exit 4) the broker counts as lost: later calls (the release and close a
 * failing run makes) get a short grace instead, and a close that fails or hangs then is ignored,
 * so the run exits promptly with its report and the broker returns what was reserved (or the
 * next run's recover does).
 */
import type {BrokerAdapter, BrokerMessage, BrowseOptions, DeliveryCost, DrainOptions, DrainSession, InflightElement, InflightOptions, InflightReport, ListedQueue, OutgoingMessage, PublishReceipt, RelatedQueue, ReservedMessage, ReturnablePage, ReturnablePageOptions} from '../adapter.js'
import {BqError, ExitCode} from '../../errors.js'
import {type Timeouts, timeoutError, withinDeadline} from './timeouts.js'

/** How long a call may still take once the broker counts as lost. */
const GRACE_AFTER_LOSS_MS = 1000
/**
 * Time per message a call carries, on top of the timeout: the timeout is for a broker that does
 * not answer, and a 20,000-message browse or a 1,000-message publish legitimately takes longer
 * than a count.
 */
const PER_MESSAGE_MS = 5

class Watchdog {
  lost = false

  constructor(
    private readonly broker: string,
    private readonly displayUrl: string,
    private readonly timeouts: Timeouts,
    /** How long reads wait by design for messages that may not come (see BrokerAdapter.readWaitMs). */
    private readonly readWaitMs: number,
  ) {}

  /** Runs `work` within the operation timeout, plus the design wait of a read and time for `messages`. */
  call<T>(what: string, work: () => Promise<T>, size: {read?: boolean; messages?: number} = {}): Promise<T> {
    const allowance = (size.read === true ? this.readWaitMs : 0) + (size.messages ?? 0) * PER_MESSAGE_MS
    const ms = this.lost ? Math.min(GRACE_AFTER_LOSS_MS, this.timeouts.operationMs) : this.timeouts.operationMs + allowance
    const bounded = withinDeadline(work(), ms, () => {
      this.lost = true
      return timeoutError(this.broker, this.displayUrl, what, ms, this.timeouts)
    })
    // The adapter's own timeout or a dropped connection (exit 4) counts as a loss too.
    bounded.catch((error: unknown) => {
      if (error instanceof BqError && error.exitCode === ExitCode.connection) this.lost = true
    })
    return bounded
  }

  /**
   * A close: bounded like any call, but after a loss it never fails (there is nothing left to tell).
   * A session that still asks the broker something after the loss (`settlesAfterLoss`) gets the
   * operation timeout for it instead of the short grace.
   */
  async close(what: string, work: () => Promise<void>, settlesAfterLoss = false): Promise<void> {
    // A close may settle by design (Pulsar waits for the broker to drop its consumer): the read allowance.
    if (!this.lost) return this.call(what, work, {read: true})
    const settling = settlesAfterLoss ? withinDeadline(work(), this.timeouts.operationMs, () => timeoutError(this.broker, this.displayUrl, what, this.timeouts.operationMs, this.timeouts)) : this.call(what, work)
    await settling.catch(() => undefined)
  }
}

class BoundedSession implements DrainSession {
  readonly nextWhileSettling?: boolean
  readonly moveAtomically?: (sources: ReservedMessage[], targetQueue: string, outgoing: OutgoingMessage[]) => Promise<void>

  constructor(
    private readonly inner: DrainSession,
    private readonly dog: Watchdog,
    private readonly queue: string,
  ) {
    this.nextWhileSettling = inner.nextWhileSettling
    const atomic = inner.moveAtomically?.bind(inner)
    if (atomic !== undefined) this.moveAtomically = (sources, targetQueue, outgoing) => dog.call(`moving ${sources.length} message(s) from ${queue} to ${targetQueue}`, () => atomic(sources, targetQueue, outgoing), {messages: sources.length})
  }

  /** A local answer (no broker call): passed through unbounded. */
  atomicTo(targetQueue: string): boolean {
    return this.inner.atomicTo?.(targetQueue) ?? true
  }

  next(max: number): Promise<ReservedMessage[]> {
    return this.dog.call(`reading from ${this.queue}`, () => this.inner.next(max), {read: true, messages: max})
  }

  ack(messages: ReservedMessage[]): Promise<void> {
    return this.dog.call(`removing ${messages.length} message(s) from ${this.queue}`, () => this.inner.ack(messages), {messages: messages.length})
  }

  release(messages: ReservedMessage[]): Promise<void> {
    return this.dog.call(`returning ${messages.length} message(s) to ${this.queue}`, () => this.inner.release(messages), {messages: messages.length})
  }

  close(): Promise<void> {
    return this.dog.close(`closing the drain of ${this.queue}`, () => this.inner.close(), this.inner.settlesAfterLoss === true)
  }

  get unlandedAcks() {
    return this.inner.unlandedAcks
  }
}

class BoundedAdapter implements BrokerAdapter {
  readonly relatedQueues?: (queue: string) => Promise<RelatedQueue[]>
  readonly readsCostDeliveries?: (queue: string) => Promise<DeliveryCost | undefined>
  readonly queueExists?: (queue: string) => Promise<boolean>
  readonly inflight?: (queue: string, options: InflightOptions) => Promise<InflightReport>
  readonly returnableInflight?: (queue: string, options: ReturnablePageOptions) => Promise<ReturnablePage>
  readonly returnInflight?: (queue: string, elements: InflightElement[]) => Promise<boolean[]>
  readonly staged?: (queue: string, limit: number) => Promise<BrokerMessage[]>
  readonly queuesAside?: () => Promise<string[]>

  constructor(
    private readonly inner: BrokerAdapter,
    private readonly dog: Watchdog,
  ) {
    const related = inner.relatedQueues?.bind(inner)
    if (related !== undefined) this.relatedQueues = (queue) => dog.call(`listing the queues next to ${queue}`, () => related(queue))
    const cost = inner.readsCostDeliveries?.bind(inner)
    if (cost !== undefined) this.readsCostDeliveries = (queue) => dog.call(`looking up ${queue}`, () => cost(queue))
    const exists = inner.queueExists?.bind(inner)
    if (exists !== undefined) this.queueExists = (queue) => dog.call(`looking up ${queue}`, () => exists(queue))
    const inflight = inner.inflight?.bind(inner)
    if (inflight !== undefined) this.inflight = (queue, options) => dog.call(`reading what is in flight on ${queue}`, () => inflight(queue, options), {messages: options.limit})
    const returnable = inner.returnableInflight?.bind(inner)
    if (returnable !== undefined) this.returnableInflight = (queue, options) => dog.call(`reading what is in flight on ${queue}`, () => returnable(queue, options), {messages: options.limit})
    const giveBack = inner.returnInflight?.bind(inner)
    if (giveBack !== undefined) this.returnInflight = (queue, elements) => dog.call(`returning ${elements.length} in-flight element(s) to ${queue}`, () => giveBack(queue, elements), {messages: elements.length})
    const staged = inner.staged?.bind(inner)
    if (staged !== undefined) this.staged = (queue, limit) => dog.call(`reading what bq set aside for ${queue}`, () => staged(queue, limit), {messages: limit})
    const aside = inner.queuesAside?.bind(inner)
    if (aside !== undefined) this.queuesAside = () => dog.call('listing the queues', () => aside())
  }

  get kind() {
    return this.inner.kind
  }

  get displayUrl() {
    return this.inner.displayUrl
  }

  get capabilities() {
    return this.inner.capabilities
  }

  get binding() {
    return this.inner.binding
  }

  publish(queue: string, messages: OutgoingMessage[]): Promise<PublishReceipt | void> {
    return this.dog.call(`publishing ${messages.length} message(s) to ${queue}`, () => this.inner.publish(queue, messages), {messages: messages.length})
  }

  browse(queue: string, options: BrowseOptions): Promise<BrokerMessage[]> {
    return this.dog.call(`reading ${queue}`, () => this.inner.browse(queue, options), {read: true, messages: Math.min(options.limit, 1_000_000)})
  }

  listQueues(): Promise<ListedQueue[]> {
    return this.dog.call('listing the queues', () => this.inner.listQueues())
  }

  count(queue: string): Promise<number> {
    return this.dog.call(`counting ${queue}`, () => this.inner.count(queue))
  }

  async drain(queue: string, options?: DrainOptions): Promise<DrainSession> {
    const session = await this.dog.call(`opening a drain of ${queue}`, () => this.inner.drain(queue, options), {read: true})
    return new BoundedSession(session, this.dog, queue)
  }

  recover(queue: string): Promise<number> {
    return this.dog.call(`recovering ${queue}`, () => this.inner.recover(queue))
  }

  close(): Promise<void> {
    return this.dog.close('closing the connection', () => this.inner.close())
  }
}

/** `adapter`, with every call bounded by the operation timeout. `broker` names it in messages (`RabbitMQ`). */
export function boundAdapter(adapter: BrokerAdapter, broker: string, timeouts: Timeouts): BrokerAdapter {
  return new BoundedAdapter(adapter, new Watchdog(broker, adapter.displayUrl, timeouts, adapter.readWaitMs ?? 0))
}
