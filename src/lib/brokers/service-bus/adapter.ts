/**
 * Azure Service Bus adapter (@azure/service-bus): a connection string, or `sb://<namespace>` with
 * BQ_SERVICEBUS_CONNECTION_STRING or Azure AD (@azure/identity, when installed).
 *
 * Bodies are Buffers in AMQP data sections both ways (binding.ts projects the envelope
 * onto Subject, CorrelationId, MessageId, ContentType and typed application properties). Browsing
 * and counting peek (peek.ts), a drain receives in peek-lock mode
 * (drain.ts), `--delay` schedules (ScheduledEnqueueTime). Queue names may address a
 * dead-letter sub-queue or a subscription (entity.ts). Service Bus entities must exist:
 * bq never creates them.
 */
import {randomBytes} from 'node:crypto'

import {ServiceBusAdministrationClient, ServiceBusClient, type ServiceBusReceiver, type ServiceBusSender, type ServiceBusMessageBatch} from '@azure/service-bus'

import {BqError, UsageError} from '../../errors.js'
import type {BrokerAdapter, BrokerMessage, BrowseOptions, Capabilities, DeliveryCost, DrainOptions, DrainSession, InflightOptions, InflightReport, ListedQueue, OutgoingMessage} from '../adapter.js'
import {AdapterBase} from '../shared/adapter-base.js'
import {serviceBusBinding} from './binding.js'
import {ServiceBusDrainSession, type DrainTuning} from './drain.js'
import {parseEntity, publishTarget, type ServiceBusEntity} from './entity.js'
import {wrapServiceBusError} from './errors.js'
import {serviceBusInflight, type RuntimeCounts} from './inflight.js'
import {toBrokerMessage, toServiceBusMessage} from './message.js'
import {PeekCursors, firstSequenceNumber, scan, type SequenceNumber} from './peek.js'
import {CONNECTION_STRING_ENV, parseServiceBusTarget, type ServiceBusTarget} from './url.js'
import {checkBatch, checkBrowse} from '../shared/check-arguments.js'
import type {Timeouts} from '../shared/timeouts.js'

export const SERVICE_BUS_CAPABILITIES: Capabilities = {
  // Queues (topics, entities) exist apart from their messages: reading a missing one is an error.
  queuesExist: true,
  // Peek (com.microsoft:peek-message) reads without locking or counting a delivery.
  truePeek: true,
  headers: true,
  delay: true,
  // `<queue>/$DeadLetterQueue` (and a subscription's), readable and redrivable like any queue.
  nativeDlq: true,
  // No Service Bus transaction spans a send and the completion of a received message here.
  atomicMove: false,
  // Sequence numbers order every entity and never change, so browsing is in queue order and an
  // abandoned message returns to its place. Receives follow that order on non-partitioned
  // entities (bq sorts each batch); a partitioned entity has no global order (see README).
  ordered: true,
  receiveSideEffects: false,
  // Peek-locks expire and the broker makes the messages available again.
  afterCrash: 'timeout-returns',
}

/** Up to this many messages are counted exactly by peeking; beyond, the runtime count is used when the management API answers. */
const EXACT_COUNT_LIMIT = 5000
/** Messages per schedule-message request. */
const SCHEDULE_CHUNK = 100

export interface ServiceBusAdapterOptions {
  drain?: DrainTuning
  env?: NodeJS.ProcessEnv
  /** --timeout (shared/timeouts.ts): each SDK try gets the operation timeout. */
  timeouts?: Timeouts
}

type AdminClient = Pick<ServiceBusAdministrationClient, 'getQueueRuntimeProperties' | 'getSubscriptionRuntimeProperties' | 'listQueues' | 'listTopics' | 'listSubscriptions'>

class ServiceBusAdapter extends AdapterBase<ServiceBusDrainSession> {
  readonly kind = 'service-bus'
  readonly capabilities = SERVICE_BUS_CAPABILITIES
  readonly binding = serviceBusBinding
  /** A drain's receive waits up to 3 s for a first message before it calls the queue empty. */
  readonly readWaitMs = 3500
  /** Distinguishes this run's republished copies (see messageIdFor). */
  private readonly runId = randomBytes(6).toString('base64url')
  private readonly senders = new Map<string, ServiceBusSender>()
  private readonly peekers = new Map<string, ServiceBusReceiver>()
  private readonly held = new Map<string, Set<string>>()
  private readonly cursors = new PeekCursors()

  constructor(
    private readonly client: ServiceBusClient,
    displayUrl: string,
    private readonly secrets: string[],
    private readonly admin: AdminClient | undefined,
    private readonly options: ServiceBusAdapterOptions,
  ) {
    super(displayUrl, {name: 'Service Bus'})
  }

  async publish(queue: string, messages: OutgoingMessage[]): Promise<void> {
    const entity = publishTarget(queue, this.displayUrl)
    this.ensureOpen(`publish to ${queue}`)
    if (messages.length === 0) return
    this.cursors.forget(entity.key)
    const sender = this.sender(entity)
    const now: OutgoingMessage[] = []
    const later = new Map<number, OutgoingMessage[]>()
    for (const message of messages) {
      const delay = message.delayMs ?? 0
      if (!Number.isFinite(delay) || delay < 0) throw new UsageError(`delay must be a non-negative number of milliseconds, got ${delay}`)
      if (delay > 0) later.set(Math.round(delay), [...(later.get(Math.round(delay)) ?? []), message])
      else now.push(message)
    }
    try {
      // Every batch is built before any is sent, so a message too large for the entity fails the call with nothing sent.
      const batches: ServiceBusMessageBatch[] = []
      let batch: ServiceBusMessageBatch | undefined
      for (const message of now) {
        const outgoing = toServiceBusMessage(message, this.runId)
        if (batch !== undefined && batch.tryAddMessage(outgoing)) continue
        if (batch !== undefined) batches.push(batch)
        batch = await sender.createMessageBatch()
        if (!batch.tryAddMessage(outgoing)) {
          throw new BqError(`a ${message.body.length}-byte message is larger than ${entity.name} on ${this.displayUrl} accepts (${batch.maxSizeInBytes} bytes per message); nothing was sent`, {code: 'message-too-large'})
        }
      }
      if (batch !== undefined) batches.push(batch)
      let sent = 0
      for (const ready of batches) {
        try {
          await sender.sendMessages(ready)
        } catch (error) {
          throw this.wrap(`publish to ${entity.name} (${sent} of ${now.length} confirmed)`, error)
        }
        sent += ready.count
      }
      for (const [delay, group] of later) {
        for (let start = 0; start < group.length; start += SCHEDULE_CHUNK) {
          const chunk = group.slice(start, start + SCHEDULE_CHUNK).map((message) => toServiceBusMessage(message, this.runId))
          await sender.scheduleMessages(chunk, new Date(Date.now() + delay))
        }
      }
    } catch (error) {
      throw this.wrap(`publish to ${entity.name}`, error)
    }
  }

  async browse(queue: string, options: BrowseOptions): Promise<BrokerMessage[]> {
    const entity = parseEntity(queue, this.displayUrl)
    const {limit, offset} = checkBrowse(options)
    this.ensureOpen(`browse ${queue}`)
    if (limit === 0) return []
    const found: BrokerMessage[] = []
    const cursor = this.cursors.find(entity.key, offset)
    let skip = cursor === undefined ? offset : 0
    try {
      const next = await scan(this.peeker(entity), cursor ?? firstSequenceNumber(), {held: this.heldOf(entity)}, {}, (message) => {
        if (skip > 0) {
          skip--
          return true
        }
        found.push(toBrokerMessage(message, entity))
        return found.length < limit
      })
      if (found.length === limit) this.cursors.remember(entity.key, offset + limit, next)
    } catch (error) {
      // An entity exists apart from its messages: a missing one is an error (QueueNotFoundError), not an empty queue.
      throw this.wrap(`peek ${entity.name}`, error)
    }
    return found
  }

  async count(queue: string): Promise<number> {
    const entity = this.entity(queue, `count ${queue}`)
    let n = 0
    let complete = true
    try {
      let next: SequenceNumber = firstSequenceNumber()
      next = await scan(this.peeker(entity), next, {held: this.heldOf(entity)}, {omitBody: true}, () => {
        n++
        if (n < EXACT_COUNT_LIMIT || this.admin === undefined) return true
        complete = false
        return false
      })
      if (complete) return n
      const runtime = await this.runtimeCount(entity)
      if (runtime !== undefined) return Math.max(0, runtime - this.heldOf(entity).size)
      // No management API: count the rest by peeking too.
      await scan(this.peeker(entity), next, {held: this.heldOf(entity)}, {omitBody: true}, () => {
        n++
        return true
      })
      return n
    } catch (error) {
      throw this.wrap(`count ${entity.name}`, error)
    }
  }

  /**
   * A redrive abandons what it leaves behind, and abandon raises a message's DeliveryCount. A queue
   * or subscription dead-letters a message past its MaxDeliveryCount (every one has a limit,
   * default 10), so one used as a DLQ (`--dlq <queue>`) counts deliveries. A dead-letter sub-queue
   * does not: Service Bus cannot dead-letter from a DLQ, so there the count rises and nothing acts
   * on it. Dry runs peek, which costs nothing either way (the engine does not ask for them).
   */
  async readsCostDeliveries(queue: string): Promise<DeliveryCost | undefined> {
    const entity = this.entity(queue, `inspect ${queue}`)
    // One peek: an entity that does not exist is a QueueNotFoundError, as for every read.
    await this.browse(queue, {limit: 1})
    if (entity.subQueue !== undefined) return undefined
    return {
      queue: `Service Bus ${entity.subscription === undefined ? 'queue' : 'subscription'} "${entity.name}"`,
      cost: `raises its DeliveryCount by one (the redrive abandons it); at the entity's MaxDeliveryCount Service Bus moves the message to ${entity.name}/$DeadLetterQueue`,
    }
  }

  async drain(queue: string, options: DrainOptions = {}): Promise<DrainSession> {
    const entity = parseEntity(queue, this.displayUrl)
    const max = options.max ?? 0
    if (!Number.isSafeInteger(max) || max < 0) throw new UsageError(`drain max must be a non-negative integer, got ${max}`)
    checkBatch(max)
    this.ensureOpen(`drain ${queue}`)
    // The drain never takes more than the queue held when it started.
    const present = await this.count(queue)
    const limit = max > 0 ? Math.min(max, present) : present
    const session = this.track(
      (untrack) =>
        new ServiceBusDrainSession({
          entity,
          displayUrl: this.displayUrl,
          limit,
          openReceiver: () => this.receiver(entity, 'peekLock'),
          held: this.heldOf(entity),
          wrap: (action, error) => this.wrap(action, error),
          onClose: () => {
            untrack()
            this.cursors.forget(entity.key)
          },
          tuning: this.options.drain,
        }),
    )
    this.cursors.forget(entity.key)
    return session
  }

  /** Active, scheduled and deferred messages, by peeking (inflight.ts); a missing entity is QueueNotFoundError. */
  async inflight(queue: string, _options: InflightOptions): Promise<InflightReport> {
    const entity = this.entity(queue, `show the in-flight work of ${queue}`)
    try {
      return await serviceBusInflight(this.peeker(entity), () => this.runtimeCounts(entity))
    } catch (error) {
      throw this.wrap(`peek ${entity.name}`, error)
    }
  }

  // recover() is the base's: Service Bus returns a crashed run's messages itself when their locks expire.

  protected async release(): Promise<void> {
    try {
      for (const sender of this.senders.values()) await sender.close().catch(() => undefined)
      for (const peeker of this.peekers.values()) await peeker.close().catch(() => undefined)
    } finally {
      await this.client.close().catch(() => undefined)
    }
  }

  /**
   * Every queue and subscription with its `$DeadLetterQueue` sub-queue (the native DLQ), through
   * the management (ATOM) API. The emulator and bq's test server have none, so there the entities
   * cannot be listed: the error says so and names what works instead.
   */
  async listQueues(): Promise<ListedQueue[]> {
    this.ensureOpen('list the entities')
    if (this.admin === undefined) {
      throw new BqError(`cannot list the entities of ${this.displayUrl}: Service Bus lists queues and subscriptions only through its management (ATOM) API, which the emulator and bq's test server do not offer; name the dead-letter queue instead, e.g. bq dlq inspect <queue>/$DeadLetterQueue`, {code: 'cannot-list-queues'})
    }
    const listed: ListedQueue[] = []
    const withDeadLetters = (entity: string) => listed.push({queue: entity}, {queue: `${entity}/$DeadLetterQueue`, nativeDeadLetterFor: [entity]})
    try {
      for await (const queue of this.admin.listQueues()) withDeadLetters(queue.name)
      for await (const topic of this.admin.listTopics()) {
        for await (const subscription of this.admin.listSubscriptions(topic.name)) withDeadLetters(`${topic.name}/Subscriptions/${subscription.subscriptionName}`)
      }
    } catch (error) {
      throw wrapServiceBusError('list the entities', this.displayUrl, error, this.secrets)
    }
    return listed.sort((a, b) => a.queue.localeCompare(b.queue))
  }

  private async runtimeCount(entity: ServiceBusEntity): Promise<number | undefined> {
    if (this.admin === undefined) return undefined
    try {
      const props = entity.subscription === undefined
        ? await this.admin.getQueueRuntimeProperties(entity.queueOrTopic)
        : await this.admin.getSubscriptionRuntimeProperties(entity.queueOrTopic, entity.subscription)
      if (entity.subQueue === 'deadLetter') return props.deadLetterMessageCount
      if (entity.subQueue === 'transferDeadLetter') return props.transferDeadLetterMessageCount
      return props.activeMessageCount
    } catch {
      // Listen/Send-only keys may not read runtime properties; peeking still works.
      return undefined
    }
  }

  /** A queue's or subscription's ActiveMessageCount and ScheduledMessageCount, where the management API answers (not for sub-queues). */
  private async runtimeCounts(entity: ServiceBusEntity): Promise<RuntimeCounts | undefined> {
    if (this.admin === undefined || entity.subQueue !== undefined) return undefined
    try {
      if (entity.subscription === undefined) {
        const props = await this.admin.getQueueRuntimeProperties(entity.queueOrTopic)
        return {active: props.activeMessageCount, scheduled: props.scheduledMessageCount}
      }
      // The SDK reads no scheduled count for a subscription (they are scheduled on the topic).
      return {active: (await this.admin.getSubscriptionRuntimeProperties(entity.queueOrTopic, entity.subscription)).activeMessageCount}
    } catch {
      // Listen/Send-only keys may not read runtime properties: the peeked counts stand, as lower bounds.
      return undefined
    }
  }

  private sender(entity: ServiceBusEntity): ServiceBusSender {
    let sender = this.senders.get(entity.key)
    if (sender === undefined) {
      sender = this.client.createSender(entity.queueOrTopic)
      this.senders.set(entity.key, sender)
    }
    return sender
  }

  private peeker(entity: ServiceBusEntity): ServiceBusReceiver {
    let peeker = this.peekers.get(entity.key)
    if (peeker === undefined) {
      peeker = this.receiver(entity, 'peekLock')
      this.peekers.set(entity.key, peeker)
    }
    return peeker
  }

  private receiver(entity: ServiceBusEntity, receiveMode: 'peekLock'): ServiceBusReceiver {
    const options = {
      receiveMode,
      subQueueType: entity.subQueue,
      skipParsingBodyAsJson: true,
      // Held messages keep their locks while the run lasts; a crash stops the renewals.
      maxAutoLockRenewalDurationInMs: 24 * 3600_000,
    }
    return entity.subscription === undefined ? this.client.createReceiver(entity.queueOrTopic, options) : this.client.createReceiver(entity.queueOrTopic, entity.subscription, options)
  }

  private heldOf(entity: ServiceBusEntity): Set<string> {
    let held = this.held.get(entity.key)
    if (held === undefined) {
      held = new Set()
      this.held.set(entity.key, held)
    }
    return held
  }

  /** The entity `queue` names, once the call (`what`) is allowed. */
  private entity(queue: string, what: string): ServiceBusEntity {
    const entity = parseEntity(queue, this.displayUrl)
    this.ensureOpen(what)
    return entity
  }

  /** Service Bus's own entity-name rule (sub-queues, subscriptions). */
  protected override check(queue: string, what: string): void {
    this.entity(queue, what)
  }

  private wrap(action: string, error: unknown): BqError {
    return wrapServiceBusError(action, this.displayUrl, error, this.secrets)
  }
}

/** Retries are few and short: a CLI run reports a failure rather than hanging on it. Each try gets the operation timeout (--timeout). */
function clientOptions(operationMs = 30_000) {
  return {retryOptions: {maxRetries: 2, retryDelayInMs: 500, maxRetryDelayInMs: 2000, timeoutInMs: operationMs}}
}

async function clientFor(target: ServiceBusTarget, displayUrl: string, operationMs?: number): Promise<{client: ServiceBusClient; admin?: AdminClient; secrets: string[]}> {
  if (target.kind === 'connection-string') {
    const client = new ServiceBusClient(target.connectionString, clientOptions(operationMs))
    // The emulator (and bq's test server) have no ATOM management endpoint.
    const admin = target.emulator ? undefined : new ServiceBusAdministrationClient(target.connectionString)
    return {client, admin, secrets: target.secrets}
  }
  let identity: {DefaultAzureCredential: new () => unknown}
  try {
    const name = '@azure/identity'
    identity = (await import(name)) as typeof identity
  } catch {
    throw new UsageError(`${displayUrl} uses Azure AD, which needs the npm package @azure/identity: run npm install @azure/identity, or pass a connection string (as --broker or in $${CONNECTION_STRING_ENV})`, 'missing-package')
  }
  const credential = new identity.DefaultAzureCredential() as ConstructorParameters<typeof ServiceBusAdministrationClient>[1]
  return {
    client: new ServiceBusClient(target.host, credential as ConstructorParameters<typeof ServiceBusClient>[1], clientOptions(operationMs)),
    admin: new ServiceBusAdministrationClient(target.host, credential),
    secrets: [],
  }
}

/** Opens the adapter from the broker value as given (a connection string is not a URL). */
export async function createAdapterFromString(rawUrl: string, displayUrl: string, options: ServiceBusAdapterOptions = {}): Promise<BrokerAdapter> {
  const target = parseServiceBusTarget(rawUrl, displayUrl, options.env)
  const {client, admin, secrets} = await clientFor(target, displayUrl, options.timeouts?.operationMs)
  return new ServiceBusAdapter(client, displayUrl, secrets, admin, options)
}
