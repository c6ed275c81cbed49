/**
 * Publishing to Kafka: idempotent writes with acks=all (every in-sync replica has the record
 * before the send resolves; resends cannot duplicate or reorder within the session), through bq's
 * own produce path (produce.ts) over the kafkajs connections KafkaWire holds. A missing
 * topic is created; an existing one is never changed. Record timestamps follow
 * ../timestamps.ts: meta.created_at unless the topic would delete or refuse it.
 */
import kafkajs, {type Admin, type Kafka} from 'kafkajs'

import {BqError} from '../../../errors.js'
import type {BatchRecord} from './batch-encoder.js'
import {splitBatches} from '../../shared/batching.js'
import {kafkaErrorType, kafkaFailure} from './errors.js'
import {PartitionChooser} from './partitioner.js'
import {IdempotentProducer} from './produce.js'
import {protocolError} from './produce-request.js'
import {recordSize} from './record-size.js'
import {lastFailure, retryFailure, retrying} from './retry.js'
import {DEFAULT_RULES, rulesFromConfig, timestampIsSafe, type TimestampRules} from '../timestamps.js'
import type {KafkaTarget} from '../url.js'
import type {KafkaMessage, KafkaWire} from './wire.js'

const {ConfigResourceTypes} = kafkajs
const TIMESTAMP_CONFIGS = ['cleanup.policy', 'retention.ms', 'message.timestamp.type', 'message.timestamp.before.max.ms', 'message.timestamp.after.max.ms', 'message.timestamp.difference.max.ms']

/**
 * A record batch must fit the topic's max.message.bytes (1 MiB by default). Records are grouped
 * under this estimate (recordSize counts more than the encoding takes), and the produce path
 * splits a batch further if the broker still says it is too large.
 */
const BATCH_BYTES = 1_000_000
const BATCH_RECORDS = 10_000

/** A record ready for the encoder, and where it must go if it says. */
interface Outgoing extends BatchRecord {
  partition?: number
}

export class KafkaPublisher {
  private readonly producer: IdempotentProducer
  private readonly chooser = new PartitionChooser()
  private admin: Promise<Admin> | undefined
  private readonly ensured = new Set<string>()
  private readonly rules = new Map<string, TimestampRules>()

  constructor(
    private readonly kafka: Kafka,
    private readonly wire: KafkaWire,
    private readonly target: KafkaTarget,
    private readonly displayUrl: string,
  ) {
    this.producer = new IdempotentProducer(wire, displayUrl)
  }

  /** Resolves once every record is acknowledged by all in-sync replicas, in order per partition. */
  async publish(topic: string, messages: KafkaMessage[]): Promise<void> {
    if (messages.length === 0) return
    await this.ensureTopic(topic)
    const rules = await this.timestampRules(topic)
    const now = Date.now()
    let confirmed = 0
    try {
      const layout = await this.wire.layout(topic)
      if (layout === undefined) throw protocolError(3)
      // Each group is a batch; unkeyed records of a group share a partition (partitioner.ts).
      const partitions = new Map<number, Outgoing[][]>()
      for (const group of splitBatches(messages, recordSize, BATCH_RECORDS, BATCH_BYTES)) {
        for (const [partition, records] of this.chooser.assign(topic, layout, group.map((message) => outgoing(message, now, rules)))) {
          const batches = partitions.get(partition)
          if (batches === undefined) partitions.set(partition, [records])
          else batches.push(records)
        }
      }
      await this.producer.send(topic, partitions, (count) => (confirmed += count))
    } catch (error) {
      const failure = retryFailure(`publish to topic ${topic}`, error, this.displayUrl, this.target.secrets)
      failure.message += ` (${confirmed} of ${messages.length} confirmed before the failure)`
      throw failure
    }
  }

  /** Creates the topic when it does not exist (with the URL's partitions/replication). */
  async ensureTopic(topic: string): Promise<void> {
    if (this.ensured.has(topic)) return
    if ((await this.wire.layout(topic)) === undefined) {
      const admin = await this.getAdmin()
      const replicationFactor = this.target.replication ?? Math.min(3, Math.max(1, await this.wire.brokerCount()))
      try {
        // A retry after a lost answer finds the topic there: TOPIC_ALREADY_EXISTS, which is fine.
        await retrying(() => admin.createTopics({topics: [{topic, numPartitions: this.target.partitions, replicationFactor}], waitForLeaders: true}), {windowMs: this.wire.windowMs})
      } catch (error) {
        if (kafkaErrorType(lastFailure(error)) !== 'TOPIC_ALREADY_EXISTS') throw retryFailure(`create topic ${topic}`, error, this.displayUrl, this.target.secrets)
      }
      this.wire.forget(topic)
      if ((await this.wire.layout(topic)) === undefined) throw new BqError(`topic ${topic} on ${this.displayUrl} was created but does not show in the cluster metadata`)
    }
    this.ensured.add(topic)
  }

  /** What the topic does with timestamps (read once per topic); Kafka's defaults when bq may not read its configuration. */
  private async timestampRules(topic: string): Promise<TimestampRules> {
    const known = this.rules.get(topic)
    if (known !== undefined) return known
    let rules = DEFAULT_RULES
    try {
      const admin = await this.getAdmin()
      const response = await retrying(() => admin.describeConfigs({resources: [{type: ConfigResourceTypes.TOPIC, name: topic, configNames: TIMESTAMP_CONFIGS}], includeSynonyms: false}), {windowMs: this.wire.windowMs})
      const entries = response.resources[0]?.configEntries ?? []
      rules = rulesFromConfig(new Map(entries.map((entry) => [entry.configName, entry.configValue])))
    } catch (error) {
      // An ACL may forbid reading topic configuration: assume deletion after 7 days (the safe side).
      if (!/AUTHORIZATION_FAILED/.test(kafkaErrorType(lastFailure(error)) ?? '')) throw retryFailure(`read the configuration of topic ${topic}`, error, this.displayUrl, this.target.secrets)
    }
    this.rules.set(topic, rules)
    return rules
  }

  /** The produce path owns no connection (KafkaWire's are closed by the adapter): only the admin client closes. */
  async close(): Promise<void> {
    const admin = this.admin
    this.admin = undefined
    await admin?.then((a) => a.disconnect()).catch(() => undefined)
  }

  private getAdmin(): Promise<Admin> {
    this.admin ??= (async () => {
      const admin = this.kafka.admin()
      try {
        await admin.connect()
      } catch (error) {
        this.admin = undefined
        throw kafkaFailure('open an admin client', error, this.displayUrl, this.target.secrets)
      }
      return admin
    })()
    return this.admin
  }
}

/**
 * The record as the encoder takes it. The timestamp is meta.created_at when the topic keeps and
 * accepts it (../timestamps.ts), else now; a record without one is stamped now too.
 */
function outgoing(message: KafkaMessage, now: number, rules: TimestampRules): Outgoing {
  const stamp = message.timestamp === undefined ? NaN : Number(message.timestamp)
  const timestamp = Number.isSafeInteger(stamp) && timestampIsSafe(stamp, now, rules) ? stamp : now
  return {key: message.key, value: message.value, headers: message.headers, timestamp, partition: message.partition}
}
