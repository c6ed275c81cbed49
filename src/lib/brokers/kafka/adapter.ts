/**
 * Apache Kafka adapter (its client library behind client/index.ts): `kafka://host:port[,host:port][?sasl=…&ssl=…]` (url.ts).
 *
 * A queue is a topic. Publishing projects the envelope onto `bq-` record headers and the record
 * timestamp (binding.ts) through an idempotent producer with acks=all. Reading never joins
 * a consumer group: records are fetched by offset (client/wire.ts).
 *
 * What "the queue" holds: a log keeps every record until retention removes it, so bq's view of a
 * topic is "what a redrive would still see": the records from the redrive group's committed
 * offset on, minus the runs it finished (state.ts). The group is `bq-redrive.<topic>`; a
 * topic bq never redrove has no such group, so every record in it is waiting. Peek, count, dlq
 * inspect and dry runs all read this same view, in partition order then offset order.
 * `BrowseOptions.from` reads the log itself instead, whatever the redrive group has done.
 */
import type {Timeouts} from '../shared/timeouts.js'
import {QueueNotFoundError, UsageError} from '../../errors.js'
import type {BrokerAdapter, BrokerMessage, BrowseFrom, BrowseOptions, Capabilities, DrainOptions, DrainSession, InflightOptions, InflightReport, ListedQueue, OutgoingMessage, RelatedQueue} from '../adapter.js'
import {kafkaBinding} from './binding.js'
import {KafkaDrainSession, type DrainPartition} from './drain.js'
import {kafkaInflight} from './inflight.js'
import {KafkaDrainLease} from './lease.js'
import {PartitionReader, TopicScan} from './reader.js'
import {FILTERED_OUT, RecordPrefilter, toBrokerMessage, toKafkaMessage} from './records.js'
import {PartitionProgress} from './state.js'
import {parseKafkaUrl, type KafkaTarget} from './url.js'
import {connectKafka, type KafkaClient, type KafkaMessage, type PartitionLayout, type Watermarks} from './client/index.js'
import {AdapterBase} from '../shared/adapter-base.js'
import {checkBrowse, checkQueue} from '../shared/check-arguments.js'

export const KAFKA_CAPABILITIES: Capabilities = {
  // Queues (topics, entities) exist apart from their messages: reading a missing one is an error.
  queuesExist: true,
  // Reading fetches by offset and commits nothing: no group, no offsets, no flags change.
  truePeek: true,
  headers: true,
  // Kafka has no delayed delivery; the binding's retry tiers (<topic>.retry.<n>) are run by the SDKs.
  delay: false,
  // No dead-letter facility of its own: the SDKs write <topic>.dlq.
  nativeDlq: false,
  // The copy is published, then the redrive progress committed: two steps (at-least-once).
  atomicMove: false,
  // A topic keeps records after they are consumed: peek --from-beginning/--from-offset/--from-time/--last.
  logBrowse: true,
  // A drain only commits progress; a dead run committed none, so its records simply wait.
  afterCrash: 'nothing-reserved',
}

/** The consumer group that records a redrive's progress through a topic. */
export function redriveGroup(topic: string): string {
  return `bq-redrive.${topic}`
}

const BROWSE_FETCH_BYTES = 1024 * 1024
const DRAIN_FETCH_BYTES = 4 * 1024 * 1024
const TOPIC_NAME = /^[a-zA-Z0-9._-]{1,249}$/

export interface KafkaAdapterOptions {
  /** Redrive metadata budget (tests make it small to exercise re-appending). */
  stateSoftLimit?: number
  stateHardLimit?: number
  /** --timeout (see shared/timeouts.ts); the client's defaults when absent. */
  timeouts?: Timeouts
}

/** Opens the adapter from the raw URL, which may list several `host:port`s (not a WHATWG URL). */
export async function createAdapterFromString(rawUrl: string, displayUrl: string, options: KafkaAdapterOptions = {}): Promise<BrokerAdapter> {
  return createKafkaAdapter({...parseKafkaUrl(rawUrl, displayUrl), timeouts: options.timeouts}, displayUrl, options)
}

/** Connects (authenticating, failing within seconds with a ConnectionError) and returns the adapter. */
export async function createKafkaAdapter(target: KafkaTarget, displayUrl: string, options: KafkaAdapterOptions = {}): Promise<KafkaAdapter> {
  return new KafkaAdapter(await connectKafka(target, displayUrl), displayUrl, options)
}

/** A topic as bq sees it right now: its partitions, their watermarks and the redrive progress. */
interface TopicView {
  layout: PartitionLayout[]
  marks: Map<number, Watermarks>
  progress: Map<number, PartitionProgress>
  /** What the group holds, raw, per partition. */
  committed: Map<number, {offset: number; metadata: string}>
  fingerprint: string
}

export class KafkaAdapter extends AdapterBase<KafkaDrainSession> {
  readonly kind = 'kafka'
  readonly capabilities = KAFKA_CAPABILITIES
  readonly binding = kafkaBinding
  /** The last browse of each topic, so paging through it reads each record once. */
  private readonly scans = new Map<string, TopicScan>()

  constructor(
    private readonly client: KafkaClient,
    displayUrl: string,
    private readonly options: KafkaAdapterOptions = {},
  ) {
    super(displayUrl, {name: 'Kafka'})
  }

  async publish(queue: string, messages: OutgoingMessage[]): Promise<void> {
    const topic = this.topic(queue)
    if (messages.some((message) => (message.delayMs ?? 0) > 0)) {
      throw new UsageError(`${this.displayUrl}: Kafka has no delayed delivery (the binding's retry topics <topic>.retry.<n> are run by the SDKs): publish without --delay`)
    }
    await this.client.publish(topic, messages.map(toKafkaMessage))
  }

  async browse(queue: string, options: BrowseOptions): Promise<BrokerMessage[]> {
    const topic = this.topic(queue)
    const {limit, offset} = checkBrowse(options)
    if (limit === 0) return []
    const view = await this.existingView(topic)
    if (options.from !== undefined) {
      // The log itself from a position: a different view, so it gets its own start.
      const starts = await this.logStarts(topic, view, options.from)
      view.fingerprint = JSON.stringify([options.from, [...starts]])
      for (const layout of view.layout) view.progress.set(layout.partition, PartitionProgress.fresh(starts.get(layout.partition) ?? view.marks.get(layout.partition)!.high))
    }
    if (options.notBefore !== undefined) {
      // --since pushed down: each partition starts at its first record at or after the time (the lookup --from-time uses).
      const times = await this.client.offsetsForTime(topic, view.layout, options.notBefore)
      for (const {partition} of view.layout) view.progress.get(partition)!.advanceTo(times.get(partition) ?? view.marks.get(partition)!.high)
      view.fingerprint = JSON.stringify([view.fingerprint, options.notBefore])
    }
    const key = `${topic}\n${options.from === undefined ? '' : JSON.stringify(options.from)}\n${options.notBefore ?? ''}`
    let scan = this.scans.get(key)
    if (scan === undefined || scan.fingerprint !== view.fingerprint || scan.index !== offset) {
      scan = new TopicScan(view.layout.map((layout) => this.reader(topic, layout, view, BROWSE_FETCH_BYTES)), view.fingerprint)
      while (scan.index < offset) {
        if ((await scan.next()) === undefined) break
      }
    } else {
      scan.extendTo(view.marks)
    }
    const found: BrokerMessage[] = []
    const prefilter = options.prefilter === undefined ? undefined : RecordPrefilter.of(options.prefilter)
    while (found.length < limit) {
      const next = scan.nextBuffered() ?? (await scan.next())
      if (next === undefined) break
      const wanted = prefilter === undefined || prefilter.passes(next.record)
      found.push(wanted ? toBrokerMessage(topic, next.partition, next.record) : FILTERED_OUT)
    }
    this.scans.set(key, scan)
    return found
  }

  /**
   * Offsets a redrive would still read: per partition, the last stable offset minus the group's
   * position, minus the runs it finished. An offset count: transaction markers and compacted-away
   * records count too, so on such topics it can exceed what browse returns.
   */
  async count(queue: string): Promise<number> {
    const topic = this.topic(queue)
    const view = await this.existingView(topic)
    const session = [...this.sessions].find((open) => open.topic === topic)
    if (session !== undefined) return session.waitingNow(view.marks)
    let total = 0
    for (const [partition, mark] of view.marks) total += view.progress.get(partition)!.waitingIn(mark.low, mark.high)
    return total
  }

  async drain(queue: string, options: DrainOptions = {}): Promise<DrainSession> {
    const topic = this.topic(queue)
    const max = options.max ?? 0
    if (!Number.isSafeInteger(max) || max < 0) throw new UsageError(`drain max must be a non-negative integer, got ${max}`)
    await this.existingView(topic) // a missing topic is refused before any lease is written
    // One redrive per topic at a time: a second is refused before it reads anything. The view is
    // read under the lease, so it includes everything a run that just finished committed.
    const lease = await KafkaDrainLease.acquire(this.client, topic, this.displayUrl)
    let view: TopicView
    try {
      view = await this.existingView(topic)
    } catch (error) {
      await lease.release().catch(() => undefined)
      throw error
    }
    const partitions: DrainPartition[] = []
    for (const layout of view.layout) {
      const progress = view.progress.get(layout.partition)!
      const part: DrainPartition = {
        reader: new PartitionReader(this.client, topic, layout, progress.committed, view.marks.get(layout.partition)!.high, () => part.progress, DRAIN_FETCH_BYTES),
        progress,
        inFlight: new Map(),
        released: 0,
        committed: view.committed.get(layout.partition) ?? {offset: -1, metadata: ''},
      }
      partitions.push(part)
    }
    return this.track((untrack) => new KafkaDrainSession({
      client: this.client,
      topic,
      groupId: redriveGroup(topic),
      partitions,
      max,
      reappend: (messages: KafkaMessage[]) => this.client.publish(topic, messages),
      softLimit: this.options.stateSoftLimit,
      hardLimit: this.options.stateHardLimit,
      lease,
      onClose: untrack,
    }))
  }

  /** Every topic but Kafka's own (`__consumer_offsets`, `__transaction_state`, …). */
  async listQueues(): Promise<ListedQueue[]> {
    this.ensureOpen('list the topics')
    const names = await this.client.topicNames()
    return names.filter((name) => !name.startsWith('__')).sort().map((queue) => ({queue}))
  }

  /**
   * The SDK-owned retry tiers `<topic>.retry.<n>` of a DLQ `<topic>.dlq`, in tier order, each with
   * the records it retains (high minus low watermark): their consumers are the SDKs' retry
   * workers, whose groups bq does not know, so this is what the log holds, not what waits.
   */
  async relatedQueues(queue: string): Promise<RelatedQueue[]> {
    const base = this.topic(queue).replace(/\.dlq$/, '')
    // Topic names are [a-zA-Z0-9._-]: only the dots need escaping.
    const tier = new RegExp(`^${base.replaceAll('.', '\\.')}\\.retry\\.(\\d+)$`)
    const tiers = (await this.client.topicNames())
      .map((name) => ({name, n: tier.exec(name)?.[1]}))
      .filter((entry): entry is {name: string; n: string} => entry.n !== undefined)
      .sort((a, b) => Number(a.n) - Number(b.n))
    const related: RelatedQueue[] = []
    for (const {name, n} of tiers) {
      const layout = await this.client.layout(name)
      let records = 0
      if (layout !== undefined) for (const mark of (await this.client.watermarks(name, layout)).values()) records += mark.high - mark.low
      related.push({queue: name, role: `retry tier ${Number(n)}`, count: records})
    }
    return related
  }

  /** Lag per consumer group and partition (inflight.ts); a missing topic is QueueNotFoundError. */
  async inflight(queue: string, _options: InflightOptions): Promise<InflightReport> {
    const topic = this.topic(queue, `show the in-flight work of topic ${queue}`)
    const layout = await this.client.layout(topic)
    if (layout === undefined) throw new QueueNotFoundError(`topic ${topic} does not exist on ${this.displayUrl}`)
    return kafkaInflight(this.client, topic, layout, await this.client.watermarks(topic, layout), redriveGroup(topic))
  }

  // recover() is the base's: a crashed run's uncommitted records simply wait in the log.

  protected async release(): Promise<void> {
    await this.client.close()
  }

  /** Where a log browse starts in each partition (never below the log start; partitions left out are skipped). */
  private async logStarts(topic: string, view: TopicView, from: BrowseFrom): Promise<Map<number, number>> {
    const starts = new Map<number, number>()
    const times = from.kind === 'time' ? await this.client.offsetsForTime(topic, view.layout, from.at) : undefined
    for (const {partition} of view.layout) {
      const {low, high} = view.marks.get(partition)!
      let start: number
      switch (from.kind) {
        case 'beginning': start = low; break
        case 'offset': start = from.partition === undefined || from.partition === partition ? from.offset : high; break
        case 'time': start = times!.get(partition) ?? high; break
        case 'last': start = high - from.count; break
      }
      starts.set(partition, Math.min(high, Math.max(low, start)))
    }
    if (from.kind === 'offset' && from.partition !== undefined && !starts.has(from.partition)) {
      throw new UsageError(`topic ${topic} has no partition ${from.partition} (it has ${view.layout.length})`)
    }
    return starts
  }

  private reader(topic: string, layout: PartitionLayout, view: TopicView, fetchBytes: number): PartitionReader {
    const progress = view.progress.get(layout.partition)!
    return new PartitionReader(this.client, topic, layout, progress.committed, view.marks.get(layout.partition)!.high, () => progress, fetchBytes)
  }

  /** The view of a topic that exists: a Kafka topic exists apart from its records, so a missing one is an error, not an empty queue. */
  private async existingView(topic: string): Promise<TopicView> {
    const view = await this.view(topic)
    if (view === undefined) throw new QueueNotFoundError(`topic ${topic} does not exist on ${this.displayUrl}`)
    return view
  }

  /** The topic's layout, watermarks and redrive progress; undefined when the topic does not exist. */
  private async view(topic: string): Promise<TopicView | undefined> {
    const layout = await this.client.layout(topic)
    if (layout === undefined) return undefined
    const partitions = layout.map((entry) => entry.partition)
    const marks = await this.client.watermarks(topic, layout)
    const held = await this.client.groupOffsets(redriveGroup(topic), topic, partitions)
    const progress = new Map<number, PartitionProgress>()
    const committed = new Map<number, {offset: number; metadata: string}>()
    const fingerprint: Array<[number, number, string, number]> = []
    for (const partition of partitions) {
      const mark = marks.get(partition)!
      const entry = held.get(partition)
      progress.set(partition, PartitionProgress.decode(entry?.offset, entry?.metadata, mark.low, mark.high))
      committed.set(partition, {offset: entry?.offset ?? -1, metadata: entry?.metadata ?? ''})
      fingerprint.push([partition, entry?.offset ?? -1, entry?.metadata ?? '', mark.low])
    }
    return {layout, marks, progress, committed, fingerprint: JSON.stringify(fingerprint)}
  }

  /** Kafka's own topic-name rule. */
  protected override check(queue: string, what: string): void {
    this.topic(queue, what)
  }

  private topic(queue: string, what = `use topic ${queue}`): string {
    checkQueue(queue, this.displayUrl)
    this.ensureOpen(what)
    if (!TOPIC_NAME.test(queue) || queue === '.' || queue === '..') {
      throw new UsageError(`"${queue}" is not a valid Kafka topic name (letters, digits, ".", "_" and "-", at most 249 characters)`)
    }
    return queue
  }
}
