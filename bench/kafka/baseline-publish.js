// The minimal kafkajs floor for publishing a JSONL file: each line is a record value, sent with an
// idempotent producer and acks=all in batches under 900 kB. No headers, no timestamps, no checks.
// Usage: node baseline-publish.js FILE TOPIC
import {createReadStream} from 'node:fs'
import readline from 'node:readline'

import kafkajs from 'kafkajs'

import {client} from './common.js'

const [file, topic] = process.argv.slice(2)
const producer = client().producer({idempotent: true, maxInFlightRequests: 1, createPartitioner: kafkajs.Partitioners.DefaultPartitioner})
await producer.connect()
let batch = []
let bytes = 0
let sent = 0
for await (const line of readline.createInterface({input: createReadStream(file), crlfDelay: Infinity})) {
  if (line === '') continue
  batch.push({value: Buffer.from(line)})
  bytes += line.length + 70
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
