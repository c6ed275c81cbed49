/** Where bq's Kafka publisher sends each record (kafka/client/partitioner.ts): pure, no broker. */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import kafkajs from 'kafkajs'

import {PartitionChooser} from '../../../src/lib/brokers/kafka/client/partitioner.js'

const layout = [0, 1, 2, 3, 4].map((partition) => ({partition, leader: partition % 2}))

describe('kafka partition choice', () => {
  it('sends a keyed record where kafkajs DefaultPartitioner (murmur2) would', () => {
    const reference = kafkajs.Partitioners.DefaultPartitioner()
    const partitionMetadata = layout.map((entry) => ({partitionId: entry.partition, leader: entry.leader, partitionErrorCode: 0, replicas: [], isr: []}))
    const records = Array.from({length: 200}, (_, n) => ({key: n % 3 === 0 ? Buffer.from(`key-${n}`) : `kéy-${n}`, n}))
    const groups = new PartitionChooser().assign('t', layout, records)
    let seen = 0
    for (const [partition, group] of groups) {
      for (const record of group) {
        assert.equal(partition, reference({topic: 't', partitionMetadata, message: {key: record.key, value: null}}), `key ${String(record.key)}`)
        seen++
      }
      assert.deepEqual(group.map((record) => record.n), [...group.map((record) => record.n)].sort((a, b) => a - b), 'order kept within a partition')
    }
    assert.equal(seen, 200)
    assert.ok(groups.size > 1)
  })

  it('keeps an explicit partition, whatever the key', () => {
    const groups = new PartitionChooser().assign('t', layout, [{partition: 4, key: 'a'}, {partition: 0}, {partition: 4, key: null}])
    assert.deepEqual([...groups].map(([partition, group]) => [partition, group.length]), [[4, 2], [0, 1]])
  })

  it('puts the unkeyed records of one batch on one partition, and rotates between batches', () => {
    const chooser = new PartitionChooser()
    const chosen: number[] = []
    for (let batch = 0; batch < 10; batch++) {
      const groups = chooser.assign('t', layout, Array.from({length: 50}, () => ({key: null})))
      assert.equal(groups.size, 1, 'one partition for the batch')
      const [[partition, group]] = [...groups]
      assert.equal(group.length, 50)
      chosen.push(partition)
    }
    for (let i = 1; i < chosen.length; i++) assert.equal(chosen[i], (chosen[i - 1] + 1) % 5, 'the next partition for the next batch')
  })

  it('skips partitions without a leader for unkeyed records', () => {
    const chooser = new PartitionChooser()
    const partial = [{partition: 0, leader: -1}, {partition: 1, leader: 3}, {partition: 2, leader: -1}]
    for (let batch = 0; batch < 5; batch++) assert.deepEqual([...chooser.assign('t', partial, [{}]).keys()], [1])
  })
})
