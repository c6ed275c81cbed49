/**
 * Publishing to Kafka: an idempotent producer with acks=all (every in-sync replica has the
 * record before the send resolves; retries cannot duplicate or reorder within the session).
 * A missing topic is created; an existing one is never changed. Record timestamps follow
 * kafka-timestamps.ts: meta.created_at unless the topic would delete or refuse it.
 */
import kafkajs, {type Admin, type Kafka, type Message, type Producer} from 'kafkajs'

import {BqError} from '../errors.js'
import {kafkaErrorType, kafkaFailure} from './kafka-errors.js'
import {DEFAULT_RULES, rulesFromConfig, timestampIsSafe, type TimestampRules} from './kafka-timestamps.js'
import {recordSize} from './kafka-records.js'
import type {KafkaTarget} from './kafka-url.js'
import type {KafkaWire} from './kafka-wire.js'

const {ConfigResourceTypes, Partitioners} = kafkajs
const TIMESTAMP_CONFIGS = ['cleanup.policy', 'retention.ms', 'message.timestamp.type', 'message.timestamp.before.max.ms', 'message.timestamp.after.max.ms', 'message.timestamp.difference.max.ms']

/**
 * kafkajs puts every record of one send for one partition into one record batch, and a batch
 * must fit the topic's max.message.bytes (1 MiB by default). Sends stay under this estimate and
 * are split further if the broker still says a batch is too large.
 */
const SEND_BYTES = 900_000
const SEND_RECORDS = 10_000
/** Errors that mean the topic's partitions are not served yet, not that the records were refused. */
const NOT_READY = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE', 'NOT_LEADER_FOR_PARTITION', 'NOT_LEADER_OR_FOLLOWER'])
const TOO_LARGE = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE'])

export class KafkaPublisher {
  private producer: Promise<Producer> | undefined
  private admin: Promise<Admin> | undefined
  private readonly ensured = new Set<string>()
  private readonly rules = new Map<string, TimestampRules>()

  constructor(
    private readonly kafka: Kafka,
    private readonly wire: KafkaWire,
    private readonly target: KafkaTarget,
    private readonly displayUrl: string,
  ) {}

  /** Resolves once every record is acknowledged by all in-sync replicas, in order. */
  async publish(topic: string, messages: Message[]): Promise<void> {
    if (messages.length === 0) return
    await this.ensureTopic(topic)
    const rules = await this.timestampRules(topic)
    const now = Date.now()
    const stamped = messages.map((message) =>
      message.timestamp === undefined || timestampIsSafe(Number(message.timestamp), now, rules) ? message : {...message, timestamp: String(now)},
    )
    const producer = await this.getProducer()
    let confirmed = 0
    for (const chunk of chunks(stamped)) {
      try {
        await this.send(producer, topic, chunk)
      } catch (error) {
        const failure = kafkaFailure(`publish to topic ${topic}`, error, this.displayUrl, this.target.secrets)
        failure.message += ` (${confirmed} of ${messages.length} confirmed before the failure)`
        throw failure
      }
      confirmed += chunk.length
    }
  }

  /** Creates the topic when it does not exist (with the URL's partitions/replication). */
  async ensureTopic(topic: string): Promise<void> {
    if (this.ensured.has(topic)) return
    if ((await this.wire.layout(topic)) === undefined) {
      const admin = await this.getAdmin()
      const replicationFactor = this.target.replication ?? Math.min(3, Math.max(1, await this.wire.brokerCount()))
      try {
        await admin.createTopics({topics: [{topic, numPartitions: this.target.partitions, replicationFactor}], waitForLeaders: true})
      } catch (error) {
        if (kafkaErrorType(error) !== 'TOPIC_ALREADY_EXISTS') throw kafkaFailure(`create topic ${topic}`, error, this.displayUrl, this.target.secrets)
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
      const response = await admin.describeConfigs({resources: [{type: ConfigResourceTypes.TOPIC, name: topic, configNames: TIMESTAMP_CONFIGS}], includeSynonyms: false})
      const entries = response.resources[0]?.configEntries ?? []
      rules = rulesFromConfig(new Map(entries.map((entry) => [entry.configName, entry.configValue])))
    } catch (error) {
      // An ACL may forbid reading topic configuration: assume deletion after 7 days (the safe side).
      if (!/AUTHORIZATION_FAILED/.test(kafkaErrorType(error) ?? '')) throw kafkaFailure(`read the configuration of topic ${topic}`, error, this.displayUrl, this.target.secrets)
    }
    this.rules.set(topic, rules)
    return rules
  }

  async close(): Promise<void> {
    const producer = this.producer
    const admin = this.admin
    this.producer = undefined
    this.admin = undefined
    await Promise.all([
      producer?.then((p) => p.disconnect()).catch(() => undefined),
      admin?.then((a) => a.disconnect()).catch(() => undefined),
    ])
  }

  private async send(producer: Producer, topic: string, chunk: Message[], attempt = 1): Promise<void> {
    try {
      await producer.send({topic, messages: chunk, acks: -1, timeout: 30_000})
    } catch (error) {
      // A topic created a moment ago may not be known to every broker yet (seen under load):
      // nothing was written, and the idempotent producer makes a resend safe. Bounded: ~15 s.
      if (NOT_READY.has(kafkaErrorType(error) ?? '') && attempt < 10) {
        await new Promise((resolve) => setTimeout(resolve, Math.min(2000, 200 * attempt)))
        return this.send(producer, topic, chunk, attempt + 1)
      }
      // The broker refused the whole batch before writing any of it: split and retry.
      if (TOO_LARGE.has(kafkaErrorType(error) ?? '') && chunk.length > 1) {
        const half = Math.ceil(chunk.length / 2)
        await this.send(producer, topic, chunk.slice(0, half))
        await this.send(producer, topic, chunk.slice(half))
        return
      }
      if (TOO_LARGE.has(kafkaErrorType(error) ?? '')) {
        throw new BqError(`a record of about ${recordSize(chunk[0])} bytes is larger than topic ${topic} on ${this.displayUrl} accepts (its max.message.bytes)`, {cause: error})
      }
      throw error
    }
  }

  private getProducer(): Promise<Producer> {
    this.producer ??= (async () => {
      const producer = this.kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        createPartitioner: Partitioners.DefaultPartitioner,
      })
      try {
        await producer.connect()
      } catch (error) {
        this.producer = undefined
        throw kafkaFailure('open a producer', error, this.displayUrl, this.target.secrets)
      }
      return producer
    })()
    return this.producer
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

/** Sends that stay under the batch size estimate (a single larger record goes alone). */
function chunks(messages: Message[]): Message[][] {
  const out: Message[][] = []
  let current: Message[] = []
  let bytes = 0
  for (const message of messages) {
    const size = recordSize(message)
    if (current.length > 0 && (bytes + size > SEND_BYTES || current.length >= SEND_RECORDS)) {
      out.push(current)
      current = []
      bytes = 0
    }
    current.push(message)
    bytes += size
  }
  if (current.length > 0) out.push(current)
  return out
}
