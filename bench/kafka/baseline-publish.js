// The minimal kafkajs floor for publishing a JSONL file: each line is a record value, sent with an
// idempotent producer and acks=all in batches under 900 kB. No headers, no timestamps, no checks.
// With --headers it also adds the six bq- headers and the timestamp from JSON.parse of the line
// (what any producer following the binding pays in kafkajs, without bq's lossless codec).
// Usage: node baseline-publish.js FILE TOPIC [--headers]
import {createReadStream} from 'node:fs'
import readline from 'node:readline'

import kafkajs from 'kafkajs'

import {client} from './common.js'

const [file, topic, mode] = process.argv.slice(2)
const withHeaders = mode === '--headers'
const project = (line) => {
  const e = JSON.parse(line)
  return {
    headers: {'bq-job': e.job, 'bq-trace-id': e.trace_id, 'bq-message-id': e.meta.id, 'bq-schema-version': String(e.meta.schema_version), 'bq-source-lang': e.meta.lang, 'bq-attempts': String(e.attempts)},
    timestamp: String(e.meta.created_at),
  }
}
const producer = client().producer({idempotent: true, maxInFlightRequests: 1, createPartitioner: kafkajs.Partitioners.DefaultPartitioner})
await producer.connect()
let batch = []
let bytes = 0
let sent = 0
for await (const line of readline.createInterface({input: createReadStream(file), crlfDelay: Infinity})) {
  if (line === '') continue
  batch.push(withHeaders ? {value: Buffer.from(line), ...project(line)} : {value: Buffer.from(line)})
  bytes += line.length + (withHeaders ? 300 : 70)
  if (bytes >= 900_000) {
    await producer.send({topic, messages: batch, acks: -1})
    sent += batch.length
    batch = []
    bytes = 0
  }
}
if (batch.length > 0) await producer.send({topic, messages: batch, acks: -1})
sent += batch.length
await producer.disconnect()
console.log(sent)
