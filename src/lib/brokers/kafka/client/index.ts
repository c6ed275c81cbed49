/**
 * The seam between bq's Kafka adapter and its client library, kafkajs. Files outside client/
 * import only this module: they see bq's own types and the small `KafkaClient` interface below,
 * never kafkajs or its types.
 *
 * Why a seam: bq reads and produces through private parts of kafkajs, not its public API: the
 * cluster factory behind the `private:Kafka:createCluster` symbol and the deep require of
 * `kafkajs/src/consumer/batch.js` (wire.ts), the broker's `private:Broker:sendRequest` method and
 * deep requires of `kafkajs/src/protocol/encoder.js` and `kafkajs/src/protocol/error.js` (produce-request.ts).
 * Any kafkajs release may move those, so package.json pins kafkajs to an exact version, and
 * changing it (or the library) means changing client/ only. `publish` is bq's hand-written
 * produce path (producer.ts → produce.ts → produce-request.ts, batch-encoder.ts); kafkajs's own
 * producer could replace it here without the adapter noticing.
 */
import type {KafkaTarget} from '../url.js'
import {connectFailure} from './errors.js'
import {KafkaPublisher} from './producer.js'
import {KafkaWire, createKafkaClient, type FetchResult, type GroupOffset, type KafkaMessage, type PartitionLayout, type Watermarks} from './wire.js'

export {kafkaErrorType} from './errors.js'
export type {FetchResult, GroupOffset, KafkaHeaders, KafkaMessage, KafkaRecord, PartitionLayout, Watermarks} from './wire.js'

/** What bq's Kafka adapter asks of the cluster. Failures are bq errors, worded and redacted. */
export interface KafkaClient {
  /** The topic's partitions and their leaders, or undefined when the topic does not exist. */
  layout(topic: string): Promise<PartitionLayout[] | undefined>
  /** Every topic name in the cluster. */
  topicNames(): Promise<string[]>
  /** Log start and last stable offset of every partition. */
  watermarks(topic: string, layout: PartitionLayout[]): Promise<Map<number, Watermarks>>
  /** Per partition, the first offset whose record timestamp is at or after `at` (Unix ms), if any. */
  offsetsForTime(topic: string, layout: PartitionLayout[], at: number): Promise<Map<number, number | undefined>>
  /** Read-committed records of one partition from `offset` on, without joining a group. */
  fetch(topic: string, partition: PartitionLayout, offset: number, maxBytes: number): Promise<FetchResult>
  /** A group's committed offsets and metadata for these partitions of a topic. */
  groupOffsets(groupId: string, topic: string, partitions: number[]): Promise<Map<number, GroupOffset>>
  /** Every consumer group id in the cluster (those the user may Describe). */
  groupIds(): Promise<string[]>
  /** Commits offsets with metadata for a group no client is a member of. */
  commitOffsets(groupId: string, topic: string, entries: Array<{partition: number; offset: number; metadata: string}>): Promise<void>
  /** Idempotent, acks=all; creates a missing topic. Resolves once every record is acknowledged. */
  publish(topic: string, messages: KafkaMessage[]): Promise<void>
  close(): Promise<void>
}

/** Connects (authenticating, failing within seconds with a one-line ConnectionError or AuthError). */
export async function connectKafka(target: KafkaTarget, displayUrl: string): Promise<KafkaClient> {
  const kafka = createKafkaClient(target)
  let wire: KafkaWire
  try {
    // Requests ride through a leader election for as long as one operation may take (retry.ts).
    wire = await KafkaWire.connect(kafka, displayUrl, target.secrets, target.timeouts?.operationMs)
  } catch (error) {
    throw connectFailure(error, displayUrl, target)
  }
  return new KafkaJsClient(wire, new KafkaPublisher(kafka, wire, target, displayUrl))
}

/** Reads through KafkaWire (kafkajs's cluster and broker connections), writes through bq's produce path. */
class KafkaJsClient implements KafkaClient {
  constructor(
    private readonly wire: KafkaWire,
    private readonly publisher: KafkaPublisher,
  ) {}

  layout(topic: string) {
    return this.wire.layout(topic)
  }

  topicNames() {
    return this.wire.topicNames()
  }

  watermarks(topic: string, layout: PartitionLayout[]) {
    return this.wire.watermarks(topic, layout)
  }

  offsetsForTime(topic: string, layout: PartitionLayout[], at: number) {
    return this.wire.offsetsForTime(topic, layout, at)
  }

  fetch(topic: string, partition: PartitionLayout, offset: number, maxBytes: number) {
    return this.wire.fetch(topic, partition, offset, maxBytes)
  }

  groupOffsets(groupId: string, topic: string, partitions: number[]) {
    return this.wire.groupOffsets(groupId, topic, partitions)
  }

  groupIds() {
    return this.wire.groupIds()
  }

  commitOffsets(groupId: string, topic: string, entries: Array<{partition: number; offset: number; metadata: string}>) {
    return this.wire.commitOffsets(groupId, topic, entries)
  }

  publish(topic: string, messages: KafkaMessage[]) {
    return this.publisher.publish(topic, messages)
  }

  /** The produce path's admin client first, then the connections it shares with reading. */
  async close(): Promise<void> {
    await this.publisher.close()
    await this.wire.close()
  }
}
