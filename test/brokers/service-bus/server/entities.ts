/**
 * The Service Bus test server's entities and message states, independent of AMQP links.
 *
 * Modelled on the documented Service Bus behaviour: every message gets a sequence number from its
 * entity, increasing in enqueue order; a peek-lock receive locks a message for the lock duration;
 * complete removes it; abandon or lock expiry makes it available again at its place (its sequence
 * number never changes) and raises its delivery count, and reaching MaxDeliveryCount moves it to
 * the entity's `$DeadLetterQueue` sub-queue with reason `MaxDeliveryCountExceeded`; dead-lettering
 * records `DeadLetterReason`/`DeadLetterErrorDescription` application properties. A scheduled
 * message stays invisible to receivers until its ScheduledEnqueueTime.
 *
 * Deliberate differences, documented in README.md: entities are created on first use (real Service
 * Bus requires them to exist; `entitiesMustExist` turns that on), there is no TTL expiry, no
 * sessions and no partitioning.
 */
import {randomUUID} from 'node:crypto'

import {parseMessage, withApplicationProperties, type MessageParts} from './amqp-codec.js'

export type MessageState = 'active' | 'scheduled' | 'deferred'

export interface Lock {
  token: string
  until: number
}

export class StoredMessage {
  removed = false
  lock: Lock | undefined
  deliveryCount = 0
  constructor(
    public parts: MessageParts,
    readonly seq: number,
    readonly enqueuedAt: number,
    public state: MessageState,
    public scheduledAt: number | undefined,
    readonly messageId: string | undefined,
  ) {}

  /** Lock expiry goes through abandon (raising the delivery count), so a locked message is never available. */
  available(): boolean {
    return !this.removed && this.state === 'active' && this.lock === undefined
  }
}

export interface EntityOptions {
  lockDurationMs: number
  maxDeliveryCount: number
  /** When set, a message whose MessageId was accepted within this window is dropped (duplicate detection). */
  duplicateDetectionMs?: number
  /**
   * As real Service Bus: entities are not created on first use; using one that was not declared
   * (`declareQueue`, `createTopic`) fails with NotFoundError. Off by default (see the header).
   */
  entitiesMustExist?: boolean
}

/** A binary min-heap by a numeric key; stale entries are skipped by the reader. */
class MinHeap<T> {
  private readonly items: T[] = []
  constructor(private readonly key: (item: T) => number) {}
  get size(): number {
    return this.items.length
  }
  push(item: T): void {
    const a = this.items
    a.push(item)
    let i = a.length - 1
    while (i > 0) {
      const parent = (i - 1) >> 1
      if (this.key(a[parent]) <= this.key(a[i])) break
      ;[a[parent], a[i]] = [a[i], a[parent]]
      i = parent
    }
  }
  peek(): T | undefined {
    return this.items[0]
  }
  pop(): T | undefined {
    const a = this.items
    if (a.length === 0) return undefined
    const top = a[0]
    const last = a.pop() as T
    if (a.length > 0) {
      a[0] = last
      let i = 0
      for (;;) {
        const l = 2 * i + 1
        const r = l + 1
        let m = i
        if (l < a.length && this.key(a[l]) < this.key(a[m])) m = l
        if (r < a.length && this.key(a[r]) < this.key(a[m])) m = r
        if (m === i) break
        ;[a[m], a[i]] = [a[i], a[m]]
        i = m
      }
    }
    return top
  }
}

/** A queue, a subscription, or one of their dead-letter sub-queues: something receivers read. */
export class SubQueue {
  private messages: StoredMessage[] = []
  private tombstones = 0
  private readonly bySeq = new Map<number, StoredMessage>()
  private readonly ready = new MinHeap<StoredMessage>((m) => m.seq)
  private nextSeq = 1
  private readonly seenIds = new Map<string, number>()
  private readonly listeners = new Set<() => void>()
  /** Every message body ever accepted here, for tests that inspect what a client sent. */
  readonly received: MessageParts[] = []

  constructor(
    readonly path: string,
    private readonly ns: Namespace,
    private readonly options: EntityOptions,
    /** The dead-letter sub-queue; undefined for a dead-letter sub-queue itself. */
    readonly deadLetter: SubQueue | undefined,
  ) {}

  get isDeadLetterQueue(): boolean {
    return this.deadLetter === undefined
  }

  get lockDurationMs(): number {
    return this.options.lockDurationMs
  }

  /** Accepts a message sent to this entity; undefined when duplicate detection dropped it. */
  enqueue(parts: MessageParts, messageId: string | undefined, scheduledAt: number | undefined, now = Date.now(), deliveryCount = 0): StoredMessage | undefined {
    this.received.push(parts)
    const window = this.options.duplicateDetectionMs
    if (window !== undefined && messageId !== undefined) {
      const seen = this.seenIds.get(messageId)
      if (seen !== undefined && now - seen < window) return undefined
      this.seenIds.set(messageId, now)
    }
    const scheduled = scheduledAt !== undefined && scheduledAt > now
    const message = new StoredMessage(parts, this.nextSeq++, now, scheduled ? 'scheduled' : 'active', scheduled ? scheduledAt : undefined, messageId)
    message.deliveryCount = deliveryCount
    this.messages.push(message)
    this.bySeq.set(message.seq, message)
    if (scheduled) this.ns.schedule(this, message)
    else this.makeReady(message)
    return message
  }

  /** The lowest-sequence message a receiver may take now, removed from the ready set. */
  takeNext(): StoredMessage | undefined {
    for (;;) {
      const top = this.ready.pop()
      if (top === undefined) return undefined
      if (top.available()) return top
    }
  }

  hasReady(): boolean {
    for (;;) {
      const top = this.ready.peek()
      if (top === undefined) return false
      if (top.available()) return true
      this.ready.pop()
    }
  }

  lock(message: StoredMessage, now = Date.now()): Lock {
    const lock = {token: randomUUID(), until: now + this.options.lockDurationMs}
    message.lock = lock
    this.ns.trackLock(this, message)
    return lock
  }

  /** Removes a message for good (complete, or a receive-and-delete transfer). */
  remove(message: StoredMessage): void {
    if (message.removed) return
    message.removed = true
    if (message.lock) this.ns.forgetLock(message.lock.token)
    message.lock = undefined
    this.bySeq.delete(message.seq)
    this.tombstones++
    if (this.tombstones > 1024 && this.tombstones * 2 > this.messages.length) {
      this.messages = this.messages.filter((m) => !m.removed)
      this.tombstones = 0
    }
  }

  /** Abandon, or an expired lock: back at its place, one more delivery counted; dead-lettered at the limit. */
  abandon(message: StoredMessage): void {
    if (message.removed) return
    if (message.lock) this.ns.forgetLock(message.lock.token)
    message.lock = undefined
    message.deliveryCount++
    if (this.deadLetter !== undefined && message.deliveryCount >= this.options.maxDeliveryCount) {
      this.moveToDeadLetter(message, 'MaxDeliveryCountExceeded', `Message could not be consumed after ${this.options.maxDeliveryCount} delivery attempts.`)
      return
    }
    this.makeReady(message)
  }

  defer(message: StoredMessage): void {
    if (message.lock) this.ns.forgetLock(message.lock.token)
    message.lock = undefined
    message.state = 'deferred'
  }

  /** Moves a message to the dead-letter sub-queue with the reason recorded as application properties. */
  moveToDeadLetter(message: StoredMessage, reason: string | undefined, description: string | undefined): void {
    if (this.deadLetter === undefined) throw new NotAllowedError('a message in a dead-letter queue cannot be dead-lettered again')
    const added: Record<string, string> = {}
    if (reason !== undefined) added.DeadLetterReason = reason
    if (description !== undefined) added.DeadLetterErrorDescription = description
    const parts = Object.keys(added).length > 0 ? withApplicationProperties(message.parts, added) : message.parts
    this.remove(message)
    const copy = this.deadLetter.enqueue(parts, undefined, undefined, message.enqueuedAt, message.deliveryCount)
    if (copy === undefined) throw new Error('dead-letter queue dropped a message')
  }

  /** Messages from `fromSeq` on in sequence order, whatever their state or lock (as Service Bus peeks). */
  peek(fromSeq: number, count: number): StoredMessage[] {
    const list = this.messages
    let lo = 0
    let hi = list.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (list[mid].seq < fromSeq) lo = mid + 1
      else hi = mid
    }
    const out: StoredMessage[] = []
    for (let i = lo; i < list.length && out.length < count; i++) if (!list[i].removed) out.push(list[i])
    return out
  }

  bySequence(seq: number): StoredMessage | undefined {
    return this.bySeq.get(seq)
  }

  /** Active (not scheduled or deferred) messages, locked or not: what Service Bus reports as active. */
  activeCount(): number {
    let n = 0
    for (const message of this.bySeq.values()) if (message.state === 'active') n++
    return n
  }

  /** Every message still here, in sequence order. */
  all(): StoredMessage[] {
    return this.messages.filter((m) => !m.removed)
  }

  makeReady(message: StoredMessage): void {
    message.state = 'active'
    message.scheduledAt = undefined
    this.ready.push(message)
    this.notify()
  }

  onReady(listener: () => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  private notifyQueued = false
  notify(): void {
    if (this.notifyQueued) return
    this.notifyQueued = true
    setImmediate(() => {
      this.notifyQueued = false
      for (const listener of [...this.listeners]) listener()
    })
  }
}

export class NotAllowedError extends Error {}
export class NotFoundError extends Error {}

/** Service Bus's wording, which the SDK turns into the code MessagingEntityNotFound. */
function notFound(path: string): string {
  return `The messaging entity '${path}' could not be found. To know more visit https://aka.ms/sbResourceMgrExceptions.`
}

interface Topic {
  kind: 'topic'
  name: string
  subscriptions: Map<string, SubQueue>
}

interface Queue {
  kind: 'queue'
  name: string
  main: SubQueue
}

/** Time-ordered entries (lock expiries, scheduled enqueues) checked by one timer. */
interface Timed {
  at: number
  run(): void
}

/** All entities of one test namespace, and the timer that expires locks and enqueues scheduled messages. */
export class Namespace {
  private readonly entities = new Map<string, Queue | Topic>()
  private readonly locks = new Map<string, {queue: SubQueue; message: StoredMessage}>()
  private readonly timed = new MinHeap<Timed>((t) => t.at)
  private readonly timer: NodeJS.Timeout

  constructor(readonly options: EntityOptions) {
    this.timer = setInterval(() => this.tick(), 50)
    this.timer.unref()
  }

  close(): void {
    clearInterval(this.timer)
  }

  /** Declares a topic with subscriptions (a send to its name then fans out). */
  createTopic(name: string, subscriptions: string[]): void {
    const key = name.toLowerCase()
    const existing = this.entities.get(key)
    if (existing?.kind === 'queue') throw new NotAllowedError(`${name} is a queue`)
    const topic: Topic = existing ?? {kind: 'topic', name, subscriptions: new Map()}
    for (const sub of subscriptions) if (!topic.subscriptions.has(sub.toLowerCase())) topic.subscriptions.set(sub.toLowerCase(), this.newSubQueue(`${name}/Subscriptions/${sub}`))
    this.entities.set(key, topic)
  }

  /** The sub-queues a message sent to `address` lands in (a queue, or every subscription of a topic). */
  sendTargets(address: string): SubQueue[] {
    const path = normalize(address)
    if (/\/\$deadletterqueue$/i.test(path) || /\/subscriptions\//i.test(path) || path.startsWith('$')) {
      throw new NotAllowedError(`cannot send to ${path}: only queues and topics accept messages`)
    }
    const existing = this.entities.get(path.toLowerCase())
    if (existing?.kind === 'topic') return [...existing.subscriptions.values()]
    return [this.queue(path).main]
  }

  /** The sub-queue receivers, peeks and management operations on `address` work on. */
  subQueue(address: string): SubQueue {
    const path = normalize(address)
    const transfer = /^(.*)\/\$transfer\/\$deadletterqueue$/i.exec(path)
    if (transfer) return this.transferDeadLetter(transfer[1])
    const dlq = /^(.*)\/\$deadletterqueue$/i.exec(path)
    const base = dlq ? dlq[1] : path
    const sub = /^(.+)\/subscriptions\/([^/]+)$/i.exec(base)
    let main: SubQueue
    if (sub) {
      if (this.options.entitiesMustExist) {
        const topic = this.entities.get(sub[1].toLowerCase())
        if (topic?.kind !== 'topic' || !topic.subscriptions.has(sub[2].toLowerCase())) throw new NotFoundError(notFound(base))
      }
      this.createTopic(sub[1], [sub[2]])
      main = (this.entities.get(sub[1].toLowerCase()) as Topic).subscriptions.get(sub[2].toLowerCase()) as SubQueue
    } else {
      const existing = this.entities.get(base.toLowerCase())
      if (existing?.kind === 'topic') throw new NotAllowedError(`${base} is a topic: receive from ${base}/Subscriptions/<name>`)
      main = this.queue(base).main
    }
    return dlq ? (main.deadLetter as SubQueue) : main
  }

  /** Finds a lock by token (management operations settle and renew by token). */
  locked(token: string): {queue: SubQueue; message: StoredMessage} | undefined {
    const entry = this.locks.get(token.toLowerCase())
    if (entry === undefined || entry.message.lock?.token !== token.toLowerCase() || entry.message.lock.until <= Date.now()) return undefined
    return entry
  }

  trackLock(queue: SubQueue, message: StoredMessage): void {
    const lock = message.lock as Lock
    this.locks.set(lock.token, {queue, message})
    this.at(lock.until, () => this.expire(lock.token))
  }

  renew(token: string, now = Date.now()): number | undefined {
    const entry = this.locked(token)
    if (entry === undefined) return undefined
    const lock = entry.message.lock as Lock
    lock.until = now + entry.queue.lockDurationMs
    this.at(lock.until, () => this.expire(lock.token))
    return lock.until
  }

  forgetLock(token: string): void {
    this.locks.delete(token)
  }

  schedule(queue: SubQueue, message: StoredMessage): void {
    this.at(message.scheduledAt as number, () => {
      if (!message.removed && message.state === 'scheduled') queue.makeReady(message)
    })
  }

  private transferDlqs = new Map<string, SubQueue>()
  private transferDeadLetter(base: string): SubQueue {
    const key = base.toLowerCase()
    let queue = this.transferDlqs.get(key)
    if (queue === undefined) {
      queue = new SubQueue(`${base}/$Transfer/$DeadLetterQueue`, this, this.options, undefined)
      this.transferDlqs.set(key, queue)
    }
    return queue
  }

  /** Creates a queue (what an operator does on real Service Bus before using it). */
  declareQueue(name: string): void {
    this.queue(normalize(name), true)
  }

  private queue(name: string, declare = false): Queue {
    const key = name.toLowerCase()
    const existing = this.entities.get(key)
    if (existing?.kind === 'queue') return existing
    if (this.options.entitiesMustExist && !declare) throw new NotFoundError(notFound(name))
    const queue: Queue = {kind: 'queue', name, main: this.newSubQueue(name)}
    this.entities.set(key, queue)
    return queue
  }

  private newSubQueue(path: string): SubQueue {
    const dlq = new SubQueue(`${path}/$DeadLetterQueue`, this, this.options, undefined)
    return new SubQueue(path, this, this.options, dlq)
  }

  private expire(token: string): void {
    const entry = this.locks.get(token)
    if (entry === undefined) return
    const lock = entry.message.lock
    if (lock === undefined || lock.token !== token || lock.until > Date.now()) return
    entry.queue.abandon(entry.message)
  }

  private at(when: number, run: () => void): void {
    this.timed.push({at: when, run})
  }

  private tick(): void {
    const now = Date.now()
    for (let next = this.timed.peek(); next !== undefined && next.at <= now; next = this.timed.peek()) {
      this.timed.pop()
      next.run()
    }
  }
}

/** An entity address without a leading slash or a namespace URL prefix. */
export function normalize(address: string): string {
  let path = address
  const url = /^[a-z]+:\/\/[^/]+\/(.*)$/i.exec(path)
  if (url) path = url[1]
  return path.replace(/^\/+/, '').replace(/\/+$/, '')
}

export {parseMessage}
