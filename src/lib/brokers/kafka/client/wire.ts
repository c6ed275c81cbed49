/**
 * The Kafka requests bq's reading side needs, without joining a consumer group: topic layout,
 * watermarks, fetch-by-offset, and a group's committed offsets (read and write); and the broker
 * connections bq's produce path (produce.ts) sends through.
 *
 * kafkajs's public consumer always joins a group and pushes records at its own pace; peeking must
 * join nothing and commit nothing, and a drain must pull exactly what it asks for. So this module
 * uses the cluster object kafkajs builds for its own clients (the `createCluster` factory behind a
 * private symbol of the `Kafka` instance) and its broker request methods. kafkajs 2.2.4 is the
 * last release of a finished project; if that factory is ever missing, bq says so in one line.
 */
import {createRequire} from 'node:module'

import kafkajs, {type Kafka, type KafkaConfig} from 'kafkajs'

import {BqError} from '../../../errors.js'
import {kafkaErrorType} from './errors.js'
import {fetchPartition} from './fetch-request.js'
import {NoBrokerAnswered, isElectionAnswer, isLostBroker, retryFailure, retrying} from './retry.js'
import type {KafkaTarget} from '../url.js'

const {Kafka: KafkaClient, logLevel} = kafkajs
const requireCjs = createRequire(import.meta.url)

/** READ_COMMITTED: records of aborted or still-open transactions are never shown or moved. */
const READ_COMMITTED = 1
const EARLIEST = -2
const LATEST = -1
/** The retry window when the target names no timeouts: the default operation timeout. */
const DEFAULT_WINDOW_MS = 30_000

/** Record headers, bq's own type: a repeated name holds an array of values (one header each). */
export type KafkaHeaders = Record<string, Buffer | string | Array<Buffer | string> | undefined>

/** A record as bq reads it. */
export interface KafkaRecord {
  partition: number
  offset: number
  key: Buffer | null
  value: Buffer
  headers: KafkaHeaders
  /** Unix ms. */
  timestamp: number
  /** The fetched bytes the value is a view of (shared by every record of one fetch), when bq decoded them itself. */
  fetched?: Buffer
}

/** A record as bq hands it to the produce path (producer.ts). */
export interface KafkaMessage {
  /** Where it must go (a drain puts a record back on its partition); else chosen by key or batch (partitioner.ts). */
  partition?: number
  key?: Buffer | string | null
  value: Buffer | string | null
  headers?: KafkaHeaders
  /** Unix ms as a decimal string; the produce path may stamp the current time instead (timestamps.ts). */
  timestamp?: string
}

export interface PartitionLayout {
  partition: number
  leader: number
}

export interface Watermarks {
  /** Log start offset. */
  low: number
  /** The last stable offset: the end of what a read-committed reader can see. */
  high: number
}

export interface FetchResult {
  /** Visible records at or after the requested offset (no control records, no aborted ones). */
  records: KafkaRecord[]
  /** Where the next fetch starts (past hidden records too); equals the request when nothing came back. */
  next: number
  /** The offset is no longer in the log (retention deleted it while bq read). */
  outOfRange?: boolean
}

export interface GroupOffset {
  /** undefined: the group has committed nothing for this partition. */
  offset?: number
  metadata: string
}

// ── the subset of kafkajs internals used here ──────────────────────────────────────────────────

interface RawRecord {
  offset: string
  key: Buffer | null
  value: Buffer | null
  headers?: KafkaHeaders
  timestamp: string
  isControlRecord?: boolean
}

interface RawPartitionData {
  partition: number
  highWatermark: string
  abortedTransactions: unknown[]
  messages: RawRecord[]
}

interface InternalBroker {
  listOffsets(request: {isolationLevel: number; topics: Array<{topic: string; partitions: Array<{partition: number; timestamp: number}>}>}): Promise<{
    responses: Array<{topic: string; partitions: Array<{partition: number; offset: string}>}>
  }>
  fetch(request: {
    replicaId?: number
    isolationLevel: number
    maxWaitTime: number
    minBytes: number
    maxBytes: number
    topics: Array<{topic: string; partitions: Array<{partition: number; fetchOffset: string; maxBytes: number}>}>
  }): Promise<{responses: Array<{topicName: string; partitions: RawPartitionData[]}>}>
  offsetFetch(request: {groupId: string; topics: Array<{topic: string; partitions: Array<{partition: number}>}>}): Promise<{
    responses: Array<{topic: string; partitions: Array<{partition: number; offset: string; metadata: string | null}>}>
  }>
  offsetCommit(request: {
    groupId: string
    groupGenerationId: number
    memberId: string
    retentionTime?: number
    topics: Array<{topic: string; partitions: Array<{partition: number; offset: string; metadata: string | null}>}>
  }): Promise<unknown>
  findGroupCoordinator(request: {groupId: string; coordinatorType: number}): Promise<unknown>
  listGroups(): Promise<{groups: Array<{groupId: string; protocolType: string}>}>
}

interface InternalCluster {
  connect(): Promise<void>
  disconnect(): Promise<void>
  refreshMetadata(): Promise<void>
  metadata(request: {topics: string[]}): Promise<{
    brokers: Array<{nodeId: number}>
    topicMetadata: Array<{topic: string; partitionMetadata: Array<{partitionId: number; leader: number}>}>
  }>
  findBroker(request: {nodeId: number}): Promise<InternalBroker>
  findGroupCoordinator(request: {groupId: string}): Promise<InternalBroker>
}

type BatchClass = new (topic: string, fetchedOffset: string, data: RawPartitionData) => {messages: RawRecord[]}

// ── the client ─────────────────────────────────────────────────────────────────────────────────

/**
 * A kafkajs client that fails fast and says nothing: bq prints its own one-line errors, and an
 * unreachable broker must fail in seconds (3 s per connection attempt, 3 attempts), not minutes.
 */
export function createKafkaClient(target: KafkaTarget): Kafka {
  const config: KafkaConfig = {
    brokers: target.brokers,
    clientId: target.clientId,
    ssl: target.tls?.options ?? false,
    // Three connect attempts fit in the connect timeout (--timeout); each request gets the operation timeout.
    connectionTimeout: target.timeouts === undefined ? 3000 : Math.max(500, Math.round(target.timeouts.connectMs / 3)),
    authenticationTimeout: target.timeouts?.connectMs ?? 5000,
    requestTimeout: target.timeouts?.operationMs ?? 30_000,
    retry: {retries: 2, initialRetryTime: 150, maxRetryTime: 2000},
    logLevel: logLevel.NOTHING,
    logCreator: () => () => undefined,
  }
  if (target.sasl !== undefined) config.sasl = {mechanism: target.sasl.mechanism, username: target.sasl.username, password: target.sasl.password} as KafkaConfig['sasl']
  return new KafkaClient(config)
}

export class KafkaWire {
  private readonly layouts = new Map<string, PartitionLayout[]>()
  private readonly coordinators = new Map<string, InternalBroker>()
  private readonly Batch: BatchClass
  /** Topics whose batches bq's own decoder does not read (fetch-request.ts): kafkajs decodes them. */
  private readonly kafkajsDecodes = new Set<string>()
  private brokerIds: number[] = []
  private closed = false

  private constructor(
    private readonly cluster: InternalCluster,
    readonly displayUrl: string,
    private readonly secrets: string[],
    /** How long a request retries a leader election or moved coordinator (the operation timeout). */
    readonly windowMs: number,
  ) {
    this.Batch = requireCjs('kafkajs/src/consumer/batch.js') as BatchClass
  }

  /** Builds the reading cluster from a kafkajs client and connects it (which authenticates). */
  static async connect(kafka: Kafka, displayUrl: string, secrets: string[], windowMs = DEFAULT_WINDOW_MS): Promise<KafkaWire> {
    const factorySymbol = Object.getOwnPropertySymbols(kafka).find((symbol) => symbol.description === 'private:Kafka:createCluster')
    const factory = factorySymbol === undefined ? undefined : (kafka as unknown as Record<symbol, unknown>)[factorySymbol]
    if (typeof factory !== 'function') {
      throw new BqError('this version of kafkajs does not expose the cluster factory bq reads with; install kafkajs 2.2.x', {code: 'missing-package'})
    }
    const cluster = (factory as (options: object) => InternalCluster)({allowAutoTopicCreation: false, metadataMaxAge: 300_000, isolationLevel: READ_COMMITTED})
    await cluster.connect()
    // The first request past the handshake: a broker that wants SASL (or refuses the user)
    // closes the connection here, and the caller still knows what the URL lacked (connectFailure).
    await cluster.refreshMetadata()
    return new KafkaWire(cluster, displayUrl, secrets, windowMs)
  }

  async close(): Promise<void> {
    this.closed = true
    await this.cluster.disconnect().catch(() => undefined)
  }

  /** The topic's partitions and their leaders, or undefined when the topic does not exist. */
  async layout(topic: string): Promise<PartitionLayout[] | undefined> {
    const known = this.layouts.get(topic)
    if (known !== undefined) return known
    return this.run(`read the metadata of topic ${topic}`, () => this.layoutOnce(topic), topic)
  }

  /** A metadata answer from any broker; kafkajs answers null when every broker it asked failed. */
  private async metadata(topics: string[]): Promise<Awaited<ReturnType<InternalCluster['metadata']>>> {
    const metadata = (await this.cluster.metadata({topics})) as Awaited<ReturnType<InternalCluster['metadata']>> | null
    if (metadata === null || metadata === undefined) throw new NoBrokerAnswered('no broker answered the metadata request')
    return metadata
  }

  /** One metadata request for the topic (no retry: callers run inside `run`). */
  private async layoutOnce(topic: string): Promise<PartitionLayout[] | undefined> {
    let layout: PartitionLayout[] | undefined
    try {
      const metadata = await this.metadata([topic])
      this.brokerIds = metadata.brokers.map((broker) => broker.nodeId)
      const found = metadata.topicMetadata.find((entry) => entry.topic === topic)
      layout = found?.partitionMetadata.map((p) => ({partition: p.partitionId, leader: p.leader})).sort((a, b) => a.partition - b.partition)
    } catch (error) {
      if (kafkaErrorType(error) !== 'UNKNOWN_TOPIC_OR_PARTITION') throw error
      layout = undefined
    }
    // A missing topic is not remembered: bq may create it a moment later.
    if (layout !== undefined && layout.length > 0) this.layouts.set(topic, layout)
    return layout === undefined || layout.length === 0 ? undefined : layout
  }

  /** Every topic name in the cluster. */
  async topicNames(): Promise<string[]> {
    return this.run('list topics', async () => (await this.metadata([])).topicMetadata.map((entry) => entry.topic))
  }

  /** How many brokers the cluster has (known after the first metadata request). */
  async brokerCount(): Promise<number> {
    if (this.brokerIds.length === 0) {
      await this.run('read the cluster metadata', async () => {
        this.brokerIds = (await this.metadata([])).brokers.map((broker) => broker.nodeId)
      })
    }
    return this.brokerIds.length
  }

  forget(topic: string): void {
    this.layouts.delete(topic)
  }

  /** A connected broker by node id: bq's produce path sends its own requests through it (produce-request.ts). */
  async broker(nodeId: number): Promise<unknown> {
    return this.cluster.findBroker({nodeId})
  }

  /** Forgets a topic's leaders and re-reads the cluster's brokers (after NOT_LEADER and the like). */
  async refresh(topic: string): Promise<void> {
    this.forget(topic)
    await this.cluster.refreshMetadata().catch(() => undefined)
  }

  /** Log start and last stable offset of every partition. */
  async watermarks(topic: string, layout: PartitionLayout[]): Promise<Map<number, Watermarks>> {
    return this.run(`read the offsets of topic ${topic}`, async () => {
      const result = new Map<number, Watermarks>()
      for (const [leader, partitions] of await this.currentLeaders(topic, layout)) {
        const broker = await this.cluster.findBroker({nodeId: leader})
        const ask = (timestamp: number) => broker.listOffsets({isolationLevel: READ_COMMITTED, topics: [{topic, partitions: partitions.map((partition) => ({partition, timestamp}))}]})
        const [low, high] = [await ask(EARLIEST), await ask(LATEST)]
        for (const partition of partitions) {
          result.set(partition, {low: offsetOf(low.responses, topic, partition), high: offsetOf(high.responses, topic, partition)})
        }
      }
      return result
    }, topic)
  }

  /**
   * Per partition, the first offset whose record timestamp is at or after `at` (Unix ms), or
   * undefined when there is none. Kafka answers from its time index: with out-of-order
   * timestamps (bq stamps meta.created_at) that is the first record at or after the time, not
   * every later one.
   */
  async offsetsForTime(topic: string, layout: PartitionLayout[], at: number): Promise<Map<number, number | undefined>> {
    return this.run(`look up offsets by time in topic ${topic}`, async () => {
      const result = new Map<number, number | undefined>()
      for (const [leader, partitions] of await this.currentLeaders(topic, layout)) {
        const broker = await this.cluster.findBroker({nodeId: leader})
        const response = await broker.listOffsets({isolationLevel: READ_COMMITTED, topics: [{topic, partitions: partitions.map((partition) => ({partition, timestamp: at}))}]})
        for (const partition of partitions) {
          const offset = offsetOf(response.responses, topic, partition)
          result.set(partition, offset < 0 ? undefined : offset)
        }
      }
      return result
    }, topic)
  }

  /** Reads records of one partition from `offset` on (at least one record if any is visible there). */
  async fetch(topic: string, partition: PartitionLayout, offset: number, maxBytes: number): Promise<FetchResult> {
    return this.run(`read topic ${topic}`, async () => {
      const broker = await this.cluster.findBroker({nodeId: await this.leaderOf(topic, partition)})
      if (!this.kafkajsDecodes.has(topic)) {
        try {
          const decoded = await fetchPartition(broker, topic, partition.partition, offset, maxBytes, this.windowMs)
          if (decoded !== undefined) return decoded
          // Compressed batches or an old format: this topic is read through kafkajs from now on.
          this.kafkajsDecodes.add(topic)
        } catch (error) {
          if (kafkaErrorType(error) === 'OFFSET_OUT_OF_RANGE') return {records: [], next: offset, outOfRange: true}
          throw error
        }
      }
      let response: Awaited<ReturnType<InternalBroker['fetch']>>
      try {
        response = await broker.fetch({
          replicaId: -1,
          isolationLevel: READ_COMMITTED,
          maxWaitTime: 0,
          minBytes: 1,
          maxBytes,
          topics: [{topic, partitions: [{partition: partition.partition, fetchOffset: String(offset), maxBytes}]}],
        })
      } catch (error) {
        if (kafkaErrorType(error) === 'OFFSET_OUT_OF_RANGE') return {records: [], next: offset, outOfRange: true}
        throw error
      }
      const data = response.responses.find((entry) => entry.topicName === topic)?.partitions.find((entry) => entry.partition === partition.partition)
      if (data === undefined || data.messages.length === 0) return {records: [], next: offset}
      let next = offset
      for (const raw of data.messages) next = Math.max(next, toOffset(raw.offset) + 1)
      // kafkajs's own batch filter: drops records below the requested offset (a compressed batch
      // starts earlier), control records, and records of aborted transactions.
      const visible = new this.Batch(topic, String(offset), data).messages
      return {records: visible.map((raw) => toRecord(raw, partition.partition)), next}
    }, topic)
  }

  /** The group's committed offsets (and metadata) for these partitions of a topic. */
  async groupOffsets(groupId: string, topic: string, partitions: number[]): Promise<Map<number, GroupOffset>> {
    const response = await this.run(`read the offsets of consumer group ${groupId}`, async () => {
      const coordinator = await this.coordinator(groupId)
      return coordinator.offsetFetch({groupId, topics: [{topic, partitions: partitions.map((partition) => ({partition}))}]})
    }, undefined, groupId)
    const result = new Map<number, GroupOffset>()
    for (const entry of response.responses.find((r) => r.topic === topic)?.partitions ?? []) {
      const offset = toOffset(entry.offset)
      result.set(entry.partition, {offset: offset < 0 ? undefined : offset, metadata: entry.metadata ?? ''})
    }
    return result
  }

  /**
   * Every consumer group the cluster knows (ListGroups asks each broker for the groups it
   * coordinates), including groups with no member that only hold committed offsets. A user sees
   * only the groups it may Describe.
   */
  async groupIds(): Promise<string[]> {
    await this.brokerCount()
    const ids = new Set<string>()
    for (const nodeId of this.brokerIds) {
      const answer = await this.run('list the consumer groups', async () => (await this.cluster.findBroker({nodeId})).listGroups())
      for (const group of answer.groups) ids.add(group.groupId)
    }
    return [...ids].sort()
  }

  /**
   * Commits offsets for a group no client is a member of (generation -1, as a standalone Kafka
   * consumer does). Kafka rejects this while the group has live members, which keeps bq from
   * overwriting a running application's offsets.
   */
  async commitOffsets(groupId: string, topic: string, entries: Array<{partition: number; offset: number; metadata: string}>): Promise<void> {
    if (entries.length === 0) return
    await this.run(`commit the offsets of consumer group ${groupId}`, async () => {
      const coordinator = await this.coordinator(groupId)
      await coordinator.offsetCommit({
        groupId,
        groupGenerationId: -1,
        memberId: '',
        retentionTime: -1,
        topics: [{topic, partitions: entries.map((entry) => ({partition: entry.partition, offset: String(entry.offset), metadata: entry.metadata}))}],
      })
    }, undefined, groupId)
  }

  private async coordinator(groupId: string): Promise<InternalBroker> {
    const known = this.coordinators.get(groupId)
    if (known !== undefined) return known
    let found: InternalBroker
    try {
      found = await this.cluster.findGroupCoordinator({groupId})
    } catch (error) {
      throw (await this.coordinatorRefusal(groupId)) ?? error
    }
    this.coordinators.set(groupId, found)
    return found
  }

  /**
   * Why no broker named the group's coordinator: kafkajs drops each broker's answer and says
   * only "Failed to find group coordinator", so one broker is asked again for its own answer
   * (GROUP_AUTHORIZATION_FAILED for a user without Describe on the group).
   */
  private async coordinatorRefusal(groupId: string): Promise<unknown> {
    if (this.brokerIds.length === 0) return undefined
    try {
      const broker = await this.cluster.findBroker({nodeId: this.brokerIds[0]})
      await broker.findGroupCoordinator({groupId, coordinatorType: 0})
      return undefined
    } catch (error) {
      return error
    }
  }

  /**
   * Runs a request, retrying within the window what a leader election or a moved coordinator
   * explains (retry.ts): each retry forgets the topic's leaders and the group's coordinator and
   * reads fresh metadata from a broker still answering. Wraps every failure.
   */
  private async run<T>(what: string, request: () => Promise<T>, topic?: string, groupId?: string): Promise<T> {
    try {
      return await retrying(request, {
        windowMs: this.windowMs,
        retriable: (error) => this.retriable(error),
        refresh: async () => {
          if (topic !== undefined) this.layouts.delete(topic)
          if (groupId !== undefined) this.coordinators.delete(groupId)
          await this.cluster.refreshMetadata()
        },
      })
    } catch (error) {
      throw retryFailure(what, error, this.displayUrl, this.secrets)
    }
  }

  /**
   * A broker answer an election explains, always; a broker that does not answer, only in a
   * cluster of several (another node can take its partitions over; a lone broker that is down
   * or hung stays so, and waiting for it would only delay exit 4).
   */
  private retriable(error: unknown): boolean {
    // A read-ahead fetch still in flight when bq closes fails at once instead of retrying.
    if (this.closed) return false
    return isElectionAnswer(error) || (isLostBroker(error) && this.brokerIds.length > 1)
  }

  /** The partition's leader as bq knows it now (a reader's layout is from when it started; leaders move). */
  private async leaderOf(topic: string, partition: PartitionLayout): Promise<number> {
    const known = this.layouts.get(topic) ?? (await this.layoutOnce(topic))
    return known?.find((entry) => entry.partition === partition.partition)?.leader ?? partition.leader
  }

  /** Partitions grouped by their current leader. */
  private async currentLeaders(topic: string, layout: PartitionLayout[]): Promise<Map<number, number[]>> {
    const current: PartitionLayout[] = []
    for (const entry of layout) current.push({partition: entry.partition, leader: await this.leaderOf(topic, entry)})
    return byLeader(current)
  }
}

/** Partitions grouped by their leader broker. */
function byLeader(layout: PartitionLayout[]): Map<number, number[]> {
  const groups = new Map<number, number[]>()
  for (const {partition, leader} of layout) groups.set(leader, [...(groups.get(leader) ?? []), partition])
  return groups
}

function offsetOf(responses: Array<{topic: string; partitions: Array<{partition: number; offset: string}>}>, topic: string, partition: number): number {
  const entry = responses.find((r) => r.topic === topic)?.partitions.find((p) => p.partition === partition)
  if (entry === undefined) throw new BqError(`Kafka returned no offset for ${topic} partition ${partition}`)
  return toOffset(entry.offset)
}

/** Kafka offsets are 64-bit; bq handles them as numbers and refuses the (theoretical) unsafe ones. */
export function toOffset(text: string | number): number {
  const value = Number(text)
  if (!Number.isSafeInteger(value)) throw new BqError(`Kafka offset ${String(text)} is beyond what bq can handle (2^53)`)
  return value
}

function toRecord(raw: RawRecord, partition: number): KafkaRecord {
  return {
    partition,
    offset: toOffset(raw.offset),
    key: raw.key ?? null,
    // A tombstone (null value) has an empty body: bq shows it as a poison message.
    value: raw.value ?? Buffer.alloc(0),
    headers: raw.headers ?? {},
    timestamp: Number(raw.timestamp),
  }
}
