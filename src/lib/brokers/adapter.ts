import type {EnvelopeFields, NativeFields} from '../envelope/fields.js'
import type {Timeouts} from './shared/timeouts.js'

/**
 * The broker adapter contract. An adapter moves bytes plus native metadata; it never decodes
 * envelopes (the codec runs in the operations layer).
 */

/** What a broker can do, declared so commands can refuse or warn instead of failing late. */
export interface Capabilities {
  /** Browsing leaves the queue exactly as it was (no redelivery flag, no receive count). */
  truePeek: boolean
  /** The binding carries out-of-band headers (needed for `bq-replay-bypass`). */
  headers: boolean
  /** Native delayed delivery (`bq publish --delay`). */
  delay: boolean
  /** The broker has its own dead-letter facility besides `<queue>.dlq`. */
  nativeDlq: boolean
  /** A move between two queues of this broker can be made atomic (exactly once). */
  atomicMove: boolean
  /**
   * Reading a message changes broker state that matters (SQS: the receive count rises and can
   * push the message into a native DLQ). Commands then read only with the operator's explicit
   * consent (`--receive`). Absent = false.
   */
  receiveSideEffects?: boolean
  /** Browse can read a retained log from a position (`BrowseOptions.from`). Absent = false. */
  logBrowse?: boolean
  /**
   * Browse calls at different offsets are independent reads and may run at once (Redis: each is
   * one LRANGE), so a long scan (`bq trace`) can ask for the next page while it looks at this one.
   * Absent = false: the adapter keeps a read position between calls (Kafka, Pulsar readers).
   */
  parallelBrowse?: boolean
  /**
   * Browse and drain hand messages out in queue order, and released messages return to their
   * original places. Absent = true. False where the broker keeps no order (SQS standard queues).
   */
  ordered?: boolean
  /**
   * A drain hands out only the messages the queue held when it started: one published during
   * the run waits for the next run (the contract suite asserts it). Absent = true. False where
   * the broker cannot tell a newer message from an older one (SQS: a drain is bounded by the
   * ApproximateNumberOfMessages it saw at its start, a count, not a position).
   */
  drainBoundedAtStart?: boolean
  /**
   * `--bypass` has an effect: the replay marker reaches consumers. Defaults to `headers`; a
   * broker without headers may offer a documented side channel instead.
   */
  bypassMarker?: boolean
  /**
   * A queue exists apart from its messages (an SQS queue, a Kafka or Pulsar topic, an Artemis
   * queue, a Service Bus entity): browse, count and drain of one that does not exist throw
   * QueueNotFoundError (exit 1, `queue-not-found`) instead of reading as empty. Absent = false:
   * on Redis and the embedded store an empty queue and a missing one are the same thing.
   */
  queuesExist?: boolean
  /**
   * What happens to the messages a drain had reserved when bq dies without closing it (the crash
   * suites assert exactly this):
   * - `transaction`: nothing was reserved outside one transaction; the next run (or `recover()`)
   *   returns what a dead process held (embedded store).
   * - `staging`: reservations wait in a staging place on the broker until the next run or
   *   `recover()` returns them (Redis `<dlq>:processing`).
   * - `broker-returns`: the broker returns them itself once it sees the connection gone
   *   (AMQP unsettled deliveries, Pulsar un-acked messages); `recover()` returns 0.
   * - `timeout-returns`: the broker returns them when a lock or visibility timeout ends (SQS,
   *   Service Bus); `recover()` returns 0.
   * - `nothing-reserved`: a drain reserves nothing; progress is only committed (Kafka's consumer
   *   group offset), so a dead run left nothing to return.
   */
  afterCrash: CrashRecovery
}

export type CrashRecovery = 'transaction' | 'staging' | 'broker-returns' | 'timeout-returns' | 'nothing-reserved'

/**
 * A binding's attempts rule (spec-broker-bindings.md): the body's `attempts` reconciled with the
 * broker's own counter. Brokers without a counter keep the body's value.
 */
export interface Binding {
  reconcileAttempts(bodyAttempts: number, native: NativeFields): number
}

/** The binding rule of brokers (and files) whose only attempts count is the body's. */
export const BODY_ATTEMPTS: Binding = {reconcileAttempts: (bodyAttempts) => bodyAttempts}

/** A message to publish: the exact body bytes, plus the envelope fields to project (null when the body is not a decodable envelope). */
export interface OutgoingMessage {
  body: Buffer
  fields: EnvelopeFields | null
  /** Stamp the `bq-replay-bypass` marker where the binding carries headers. */
  bypass?: boolean
  /** Deliver no earlier than this many milliseconds from now (only where `capabilities.delay`). */
  delayMs?: number
  /**
   * This envelope's meta.id may have been published before (a redrive or replay). Brokers that
   * deduplicate by meta.id (SQS FIFO) must still deliver it rather than drop it as a duplicate.
   */
  republish?: boolean
  /**
   * Application headers to carry with the message (string → string): a redriven message's own
   * headers (W3C `traceparent` and the like), or those an export recorded, restored by replay.
   * Never bq's projected `bq-*` headers (the adapter writes those from `fields`) nor broker
   * bookkeeping. Adapters write them where the binding has a header channel (Redis: the frame).
   */
  appHeaders?: Record<string, string>
  /**
   * The ledger id of the run publishing this copy (a redrive or replay): written as `bq-run-id`
   * where the binding has headers, outside the body (the envelope bytes stay as they are).
   */
  runId?: string
  /**
   * A restore (`replay --as-is` of an export that recorded them): write these native properties
   * as the broker held them instead of the binding's projection of the body. Only the adapter of
   * `restore.broker` uses them (another broker publishes as usual); `appHeaders` is then unused
   * (the recorded headers are among the properties), `bypass` and `runId` are still added.
   */
  restore?: NativeProperties
}

/**
 * A message's native properties, everything bq can read that a consumer can observe (content
 * type, priority, durability, message id, headers, body section…), recorded by an export so a
 * restore writes them back (docs/restore-fidelity.md). JSON: `properties` is the adapter's own
 * shape, values in shared/native-json.ts's tagged form. `broker` is the adapter's `kind`.
 */
export interface NativeProperties {
  broker: string
  properties: Record<string, unknown>
}

/** A message as found on the broker. */
export interface BrokerMessage {
  /** The body exactly as stored. */
  body: Buffer
  /** Native metadata as the broker returned it, JSON-friendly, for `bq peek --headers`. */
  headers: Record<string, unknown>
  /** What the native metadata says about the envelope (the inverse projection). */
  native: NativeFields
  /** Broker-side enqueue/publish time in Unix ms, when known. */
  enqueuedAt?: number
  /** A broker-specific position or id, for display (list index, row id, offset, sequence number). */
  position?: string
  /**
   * The message's application headers (string → string) that travel with it on a redrive or an
   * export: everything in its native headers except bq's projected `bq-*` headers, the replay
   * marker and broker bookkeeping (delivery counts, death records, timestamps). Empty when none.
   */
  appHeaders?: Record<string, string>
  /** Its native properties for an export to record (adapters that can restore them). */
  nativeProperties?: NativeProperties
  /**
   * The value exactly as stored when the binding wraps the body (a Redis `__bq_frame` frame);
   * `body` is then the envelope inside. Undefined when the stored value is the body.
   */
  stored?: Buffer
}

/** A message taken from a queue by a drain session; it stays recoverable until acked. */
export interface ReservedMessage extends BrokerMessage {
  /** Adapter-private handle. */
  readonly handle: unknown
}

export interface DrainOptions {
  /** Stop after this many messages (0 = every message present when the drain started). */
  max?: number
}

/**
 * A drain over one source queue (used by redrive). Messages it hands out are invisible to
 * other consumers until acked or released. Released messages return to the source when the
 * session closes (not before, so one run never sees the same message twice), in their
 * original order where the broker allows it. A crash leaves reserved messages recoverable:
 * the broker returns them itself, or `recover()` does (Redis staging list).
 */
export interface DrainSession {
  /**
   * The caller may ask for the next batch while it is still acking, moving or releasing the
   * previous one (the redrive engine then decodes the next batch while the previous one moves).
   * Absent = false: each batch is settled before the next is asked for (an SQS FIFO queue hands
   * out more of a message group only then).
   */
  readonly nextWhileSettling?: boolean
  /** Up to `max` more messages; an empty array when the drain is done. */
  next(max: number): Promise<ReservedMessage[]>
  /** Remove these messages from the source for good (call only after the target confirmed). */
  ack(messages: ReservedMessage[]): Promise<void>
  /**
   * Publish `outgoing` to `targetQueue` on this same broker and remove `sources` from the
   * source queue as one atomic step. Only on adapters with `capabilities.atomicMove`.
   */
  moveAtomically?(sources: ReservedMessage[], targetQueue: string, outgoing: OutgoingMessage[]): Promise<void>
  /**
   * False when a move to this queue cannot be one atomic step after all (Redis Cluster: the
   * target is in another hash slot); the engine then confirms on the target first and removes the
   * original after (at least once), as across brokers. Absent = every move can be atomic.
   */
  atomicTo?(targetQueue: string): boolean
  /** Leave these messages on the source (returned at close). */
  release(messages: ReservedMessage[]): Promise<void>
  /** Return every released or un-acked message to the source and end the session. */
  close(): Promise<void>
  /**
   * Set by close() where acks are not confirmed (Pulsar's WebSocket API) and the connection was
   * lost: messages acked by calls that resolved whose ack never reached the broker, so they are
   * back on the source (and on their target). `exact` when read from the broker; otherwise it
   * could not be asked and every such ack is counted (an upper bound). Absent: none.
   */
  readonly unlandedAcks?: UnlandedAcks
  /**
   * True when close() still has a question for the broker after the connection was lost (which
   * acks landed) that it can answer quickly: the timeout wrapper then gives the close its
   * operation timeout rather than the short grace of a lost broker.
   */
  readonly settlesAfterLoss?: boolean
}

export interface UnlandedAcks {
  count: number
  /** Acks sent in the session (by calls that resolved), the most `count` can be. */
  sent: number
  exact: boolean
  /** Why it could not be exact. */
  reason?: string
}

export interface BrowseOptions {
  limit: number
  /** Skip this many messages from the head first. */
  offset?: number
  /**
   * Read the broker's log from here instead of the queue's head (only where
   * `capabilities.logBrowse`): Kafka keeps records after they are consumed.
   */
  from?: BrowseFrom
  /**
   * `--since` pushed down, in Unix ms: messages the broker took before this time may be left out.
   * A hint: an adapter that cannot seek by time ignores it (the caller filters every message
   * anyway). Kafka seeks each partition to its first record at or after it.
   */
  notBefore?: number
  /**
   * The cheap test the caller applies first to every message (bq trace's byte search). A message
   * that passes neither test (its body; any one of its header values) may come back as a stand-in
   * with an empty body and no headers or fields, which the caller only counts: an adapter whose
   * messages are costly to build (Kafka) skips that work. Other adapters ignore it.
   */
  prefilter?: BrowsePrefilter
}

/** See `BrowseOptions.prefilter`: each test answers whether a message with these bytes could be wanted. */
export interface BrowsePrefilter {
  body(body: Buffer): boolean
  headerValue(value: Buffer): boolean
  /**
   * Optional, for a body test that only looks for byte strings: false when no body lying within
   * these bytes can pass `body` (an adapter that reads many messages in one buffer tests it once).
   */
  bodiesWithin?(bytes: Buffer): boolean
}

/** Where a log browse starts: the log start, an offset (in one partition, or each), a time, or the last N records (of each partition). */
export type BrowseFrom = {kind: 'beginning'} | {kind: 'offset'; offset: number; partition?: number} | {kind: 'time'; at: number} | {kind: 'last'; count: number}

/** What a publish may report beyond "confirmed". */
export interface PublishReceipt {
  /** Messages the broker may hold twice: a send was retried after its answer was lost, and nothing deduplicates it. */
  possiblyTwice: number
}

export interface BrokerAdapter {
  /** The broker's one name, as its folder under src/lib/brokers/ (`rabbitmq`, `service-bus`, …). */
  readonly kind: string
  /** The broker URL with any password replaced, safe to print. */
  readonly displayUrl: string
  readonly capabilities: Capabilities
  /** The binding rules the operations apply to what this broker returns. */
  readonly binding: Binding
  /**
   * Publish every message; resolves only once the broker durably confirmed all of them. A broker
   * whose client re-sent a request after losing its answer says how many messages it may now hold
   * twice (SQS standard queues); the others resolve to nothing.
   */
  publish(queue: string, messages: OutgoingMessage[]): Promise<PublishReceipt | void>
  /** Non-destructive look at the head of a queue. */
  browse(queue: string, options: BrowseOptions): Promise<BrokerMessage[]>
  /** How many messages wait in the queue (ready ones; reserved ones are not counted). */
  count(queue: string): Promise<number>
  /**
   * Whether anything of `queue` exists, on brokers where a queue that was never there reads as an
   * empty one (Redis: the list or its staging key; the embedded store: a row), so a misspelled
   * name can be noted instead of passing for an empty queue. Absent elsewhere: a missing queue
   * there is QueueNotFoundError already.
   */
  queueExists?(queue: string): Promise<boolean>
  /** Start draining a queue (see DrainSession). */
  drain(queue: string, options?: DrainOptions): Promise<DrainSession>
  /**
   * Return messages a crashed run left in a staging place to their source queue.
   * Resolves to how many were returned. Adapters whose broker does this itself return 0.
   */
  recover(queue: string): Promise<number>
  /**
   * Every queue (topic, entity) on the broker, for `bq dlq ls`; bq's own bookkeeping keys are not
   * queues. Throws a BqError saying why where the broker offers no way to list (RabbitMQ without
   * its management API).
   */
  listQueues(): Promise<ListedQueue[]>
  /**
   * Queues that belong to this one by its binding's convention (Kafka's SDK-owned retry tiers
   * `<topic>.retry.<n>` next to `<topic>.dlq`), for `bq dlq inspect`. Optional.
   */
  relatedQueues?(queue: string): Promise<RelatedQueue[]>
  /**
   * Whether taking a message from this queue and handing it back (a drain's released or
   * un-acked messages, a browse on a broker without a true peek) costs it one of a limited number
   * of deliveries: the broker counts returns and drops or dead-letters a message past its limit
   * (RabbitMQ quorum queues: x-delivery-count toward x-delivery-limit; later Service Bus
   * MaxDeliveryCount, SQS maxReceiveCount, Pulsar and Artemis redelivery limits). Resolves to
   * what the queue counts, or undefined when handing back is free; throws QueueNotFoundError for
   * a missing queue. Looks at no message. The redrive engine refuses, before touching anything,
   * what would cost deliveries without the operator's consent. Absent = handing back is free.
   */
  readsCostDeliveries?(queue: string): Promise<DeliveryCost | undefined>
  /**
   * The longest a read (browse, drain, a drain's next) waits by design for messages that may not
   * come, e.g. Pulsar's idle wait that tells an empty topic. The operation timeout counts on top
   * (shared/bounded.ts). Absent = 0.
   */
  readonly readWaitMs?: number
  /**
   * What consumers of this queue have taken but not finished, from the broker's own numbers, for
   * `bq inflight ls`: counts always, and the elements themselves where the broker keeps them
   * where bq can read them (Redis `<queue>:processing`, Laravel's `:reserved` and `:delayed`).
   * Looks without changing anything. Throws QueueNotFoundError where queues exist apart from their
   * messages and this one does not. Every adapter implements it.
   */
  inflight?(queue: string, options: InflightOptions): Promise<InflightReport>
  /**
   * For `bq inflight return`, where only an operator returns unfinished work (Redis
   * `<queue>:processing`, Laravel's `:reserved`): one page of the elements a return may move,
   * newest page first, each page in taken order (oldest first). `before` is the previous page's
   * `next` (undefined: start at the newest). Changes nothing. Present together with returnInflight.
   */
  returnableInflight?(queue: string, options: ReturnablePageOptions): Promise<ReturnablePage>
  /**
   * Moves these elements (of one returnableInflight page) back to the head of `queue`, in their
   * order, byte for byte: each one only if it is still where it was found (removed there exactly
   * once, and pushed only then), so an element its consumer finished meanwhile never comes back.
   * Resolves to whether each moved.
   */
  returnInflight?(queue: string, elements: InflightElement[]): Promise<boolean[]>
  /**
   * For `bq trace`: messages bq's own drains set aside on the broker (Redis `<queue>:bq-held`, where
   * a drain keeps what it released until it closes, or a crashed drain left them), up to `limit`,
   * looking without changing anything. Absent where bq keeps nothing of its own on the broker.
   */
  staged?(queue: string, limit: number): Promise<BrokerMessage[]>
  /**
   * For `bq trace`: queues listQueues does not name because only their in-flight or staging keys
   * exist (Redis deletes an empty list, so a queue whose every message is in `<queue>:processing`,
   * `:bq-held`, Laravel's `:reserved` or `:delayed` has no list of its own). Absent = none.
   */
  queuesAside?(): Promise<string[]>
  /** Release connections. Safe to call twice. */
  close(): Promise<void>
}

/** What a queue that counts deliveries counts (see BrokerAdapter.readsCostDeliveries). */
export interface DeliveryCost {
  /** The queue as the broker knows it, e.g. `RabbitMQ quorum queue "orders.dlq"`. */
  queue: string
  /** What one handed-back message costs, e.g. `one x-delivery-count, toward its delivery limit`. */
  cost: string
  /** The delivery limit, when the adapter knows it. */
  limit?: number
  /** How to look at the queue without that cost, when the broker offers a way (one clause). */
  alternative?: string
}

/** A queue as BrokerAdapter.listQueues finds it. */
export interface ListedQueue {
  queue: string
  /**
   * The broker's own dead-letter facility puts messages here (an SQS RedrivePolicy target, a
   * Service Bus `$DeadLetterQueue` sub-queue, an Artemis dead-letter address, a RabbitMQ
   * dead-letter-exchange target): the queues it takes them from, where the broker says.
   */
  nativeDeadLetterFor?: string[]
}

export interface RelatedQueue {
  queue: string
  /** What it is to the inspected queue, e.g. `retry tier 1`. */
  role: string
  /** Messages in it, as this broker counts them (see the adapter). */
  count: number
}

/**
 * What a broker folder's index.ts exports: the registry loads it lazily (and with it the
 * broker's SDK) only when one of its schemes is used.
 */
/** What the registry hands every broker's open(). */
export interface OpenOptions {
  timeouts: Timeouts
  /** The command's warning path (stderr and the JSON `warnings`). */
  warn?: (message: string) => void
}

export interface BrokerModule {
  /**
   * Opens an adapter for a URL of one of this broker's schemes; `displayUrl` is the redacted form
   * for messages. `options.timeouts` bound the connect and the SDK's own requests (the registry
   * bounds every call on top).
   */
  open(rawUrl: string, displayUrl: string, options: OpenOptions): Promise<BrokerAdapter>
}

export interface InflightOptions {
  /** Read at most this many elements (where the broker shows them); 0 = counts only. */
  limit: number
}

/**
 * One of the broker's own numbers about a queue's in-flight work. `name` is snake_case and says
 * what the broker counts: `processing`, `reserved`, `delayed` (Redis, Laravel); `unacked`,
 * `consumers` (RabbitMQ); `not_visible`, `delayed` (SQS); `lag` (Kafka, per group and
 * partition); `delivering`, `scheduled` (Artemis); `unacked`, `backlog` (Pulsar, per
 * subscription); `active`, `scheduled`, `deferred` (Service Bus). Every gauge counts messages,
 * except `consumers`.
 */
export interface InflightGauge {
  name: string
  value: number
  /** What it is scoped to within the queue: `{subscription}`, `{group, partition}`. */
  labels?: Record<string, string>
  /** What the broker means by it, in one short clause (table footnotes, OpenMetrics HELP). */
  help?: string
}

/** An in-flight element the broker lets bq read. */
export interface InflightElement extends BrokerMessage {
  /** Where it waits: `processing`, `reserved` or `delayed`. */
  place: string
  /** Laravel `:reserved`: when the reservation expires, Unix ms (the set's score). */
  expiresAt?: number
  /** Laravel `:delayed`: when the job is due, Unix ms (the set's score). */
  dueAt?: number
}

export interface InflightReport {
  gauges: InflightGauge[]
  /** Up to `limit` elements, oldest taken first; absent where the broker shows only counts. */
  elements?: InflightElement[]
  /** Why no element is shown (the broker keeps them where no client can read them); absent when shown. */
  countsOnly?: string
  /**
   * How and when the broker hands unfinished work back by itself (an ack timeout, a lock
   * expiring, a closed connection), in one sentence; absent where only an operator returns it
   * (Redis `:processing`). `bq inflight return` prints it instead of moving anything.
   */
  returnsItself?: string
}

export interface ReturnablePageOptions {
  /** Where the previous page began (its `next`); undefined for the first page. */
  before?: number
  limit: number
}

export interface ReturnablePage {
  /** Oldest taken first. */
  elements: InflightElement[]
  /** Pass as `before` for the next (older) page; undefined when this page reached the oldest. */
  next?: number
}
