/**
 * Which partition each record of one batch goes to.
 *
 * - An explicit partition wins: a drain puts a record back exactly where it was.
 * - A key goes through kafkajs's DefaultPartitioner (murmur2 of the key, like Kafka's Java
 *   client), so keyed records land where any kafkajs or Java producer would put them.
 * - Records with neither all go to one partition per batch, the next batch to the next partition
 *   (Kafka's own sticky partitioning, KIP-480): one record batch instead of one per partition,
 *   and over many batches the load still spreads. Only partitions with a leader are chosen.
 */
import {randomInt} from 'node:crypto'

import kafkajs, {type PartitionMetadata} from 'kafkajs'

import type {PartitionLayout} from './wire.js'

const {Partitioners} = kafkajs

export interface Routable {
  partition?: number
  key?: Buffer | string | null
}

export class PartitionChooser {
  private readonly keyed = Partitioners.DefaultPartitioner()
  /** Per topic: how many batches chose a sticky partition so far (from a random start). */
  private readonly turns = new Map<string, number>()

  /** One batch's worth of records, grouped by partition, each group in the records' order. */
  assign<T extends Routable>(topic: string, layout: PartitionLayout[], records: readonly T[]): Map<number, T[]> {
    const groups = new Map<number, T[]>()
    let sticky: number | undefined
    let partitionMetadata: PartitionMetadata[] | undefined
    for (const record of records) {
      let partition = record.partition
      if (partition === undefined || partition === null) {
        if (record.key !== undefined && record.key !== null) {
          // The partitioner reads the partition ids and leaders only.
          partitionMetadata ??= layout.map((entry) => ({partitionId: entry.partition, leader: entry.leader, partitionErrorCode: 0, replicas: [], isr: []}))
          partition = this.keyed({topic, partitionMetadata, message: {key: record.key, value: null}})
        } else {
          sticky ??= this.stickyPartition(topic, layout)
          partition = sticky
        }
      }
      const group = groups.get(partition)
      if (group === undefined) groups.set(partition, [record])
      else group.push(record)
    }
    return groups
  }

  private stickyPartition(topic: string, layout: PartitionLayout[]): number {
    const turn = this.turns.get(topic) ?? randomInt(layout.length)
    this.turns.set(topic, turn + 1)
    const available = layout.filter((entry) => entry.leader >= 0)
    const choices = available.length > 0 ? available : layout
    return choices[turn % choices.length].partition
  }
}
