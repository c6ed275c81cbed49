// The raw kafkajs floor for a Kafka redrive: a consumer group reads <queue>.dlq from the start up
// to the end offsets taken first, each batch is produced to <queue> (idempotent, acks=all, values
// and headers as they are: no reset, no selection, no report), then its offsets are committed.
// Usage: node baseline-redrive.js QUEUE
import kafkajs from 'kafkajs'

import {client} from './common.js'

const [queue] = process.argv.slice(2)
const dlq = `${queue}.dlq`
const kafka = client()
const admin = kafka.admin()
await admin.connect()
const ends = new Map((await admin.fetchTopicOffsets(dlq)).map((p) => [p.partition, Number(p.high)]))
const groupId = `bench-baseline-${Date.now().toString(36)}`
const producer = kafka.producer({idempotent: true, maxInFlightRequests: 1, createPartitioner: kafkajs.Partitioners.DefaultPartitioner})
const consumer = kafka.consumer({groupId, maxBytesPerPartition: 4 << 20})
await Promise.all([producer.connect(), consumer.connect()])
await consumer.subscribe({topic: dlq, fromBeginning: true})
let moved = 0
const finished = new Set([...ends].filter(([, end]) => end === 0).map(([partition]) => partition))
let done
const allDone = new Promise((resolve) => (done = resolve))
if (finished.size === ends.size) done()
await consumer.run({
  autoCommit: false,
  eachBatch: async ({batch, resolveOffset}) => {
    const end = ends.get(batch.partition)
    const records = batch.messages.filter((m) => Number(m.offset) < end)
    let chunk = []
    let bytes = 0
    for (const m of records) {
      chunk.push({value: m.value, headers: m.headers, timestamp: m.timestamp})
      bytes += (m.value?.length ?? 0) + 200
      if (bytes >= 900_000) {
        await producer.send({topic: queue, messages: chunk, acks: -1})
        chunk = []
        bytes = 0
      }
    }
    if (chunk.length > 0) await producer.send({topic: queue, messages: chunk, acks: -1})
    if (records.length > 0) {
      resolveOffset(records[records.length - 1].offset)
      const next = Number(records[records.length - 1].offset) + 1
      await consumer.commitOffsets([{topic: dlq, partition: batch.partition, offset: String(next)}])
      moved += records.length
      if (next >= end) finished.add(batch.partition)
    }
    if (finished.size === ends.size) done()
  },
})
await allDone
await consumer.disconnect()
await producer.disconnect()
await admin.deleteGroups([groupId]).catch(() => undefined)
await admin.disconnect()
console.log(moved)
