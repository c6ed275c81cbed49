/* global fetch */
// The transport ceiling for a Pulsar redrive over the WebSocket API, without bq: an Exclusive
// consumer on the DLQ (the proxy's own flow control: an ack frees a slot), a producer to the
// target, and each message acknowledged on the DLQ once the producer's ack for its copy came back.
// Bodies are copied as they are (no envelope decoding or attempts reset).
// Usage: node bench/pulsar/baseline.js ADMIN_URL QUEUE DLQ
import WebSocket from 'ws'

const [adminUrl, queue, dlq] = process.argv.slice(2)
const wsBase = adminUrl.replace(/^http/, 'ws')
const path = (topic) => `persistent/public/default/${encodeURIComponent(topic)}`
const sub = 'bq-baseline'

const created = await fetch(`${adminUrl}/admin/v2/${path(dlq)}/subscription/${sub}`, {method: 'PUT', headers: {'content-type': 'application/json'}, body: JSON.stringify({ledgerId: -1, entryId: -1, partitionIndex: -1})})
if (!created.ok && created.status !== 409) throw new Error(`create subscription: HTTP ${created.status}`)
const stats = await (await fetch(`${adminUrl}/admin/v2/${path(dlq)}/stats?getPreciseBacklog=true`)).json()
const total = stats.subscriptions[sub].msgBacklog

const open = (url) => new Promise((resolve, reject) => {
  const socket = new WebSocket(url, {perMessageDeflate: false})
  socket.once('open', () => resolve(socket))
  socket.once('error', reject)
})
const producer = await open(`${wsBase}/ws/v2/producer/${path(queue)}?sendTimeoutMillis=0`)
const consumer = await open(`${wsBase}/ws/v2/consumer/${path(dlq)}/${sub}?subscriptionType=Exclusive&receiverQueueSize=1000`)
let moved = 0
const done = new Promise((resolve, reject) => {
  producer.on('message', (data) => {
    const ack = JSON.parse(data.toString())
    if (ack.result !== 'ok') return reject(new Error(`publish failed: ${ack.errorMsg ?? ack.result}`))
    consumer.send(JSON.stringify({messageId: ack.context}))
    if (++moved === total) resolve()
  })
  consumer.on('message', (data) => {
    const message = JSON.parse(data.toString())
    producer.send(JSON.stringify({payload: message.payload, properties: message.properties, context: message.messageId}))
  })
})
if (total > 0) await done
consumer.close()
producer.close()
// The proxy groups acks (about every 100 ms): wait until the consumer is gone so they are applied.
for (;;) {
  const now = await (await fetch(`${adminUrl}/admin/v2/${path(dlq)}/stats`)).json()
  if ((now.subscriptions[sub]?.consumers ?? []).length === 0) break
  await new Promise((resolve) => setTimeout(resolve, 50))
}
console.error(`baseline moved ${moved} of ${total}`)
