// Seeds <queue>.dlq with N dead-lettered envelopes through bq's own adapter (from dist/); every
// EVERY-th one (from the first) has dead_letter.reason "selected", the others "failed".
// Usage: node bench/rabbitmq/seed.js URL QUEUE N EVERY [quorum]
import amqp from 'amqplib'

import {openBroker} from '../../dist/lib/brokers/registry.js'
import {annotate, fieldsOf, make} from '../../dist/lib/envelope/index.js'

const [url, queue, n, every, type] = process.argv.slice(2)
const dlq = `${queue}.dlq`
if (type === 'quorum') {
  const connection = await amqp.connect(url)
  const channel = await connection.createChannel()
  await channel.assertQueue(dlq, {durable: true, arguments: {'x-queue-type': 'quorum'}})
  await connection.close()
}
const adapter = await openBroker(url)
const total = Number(n)
for (let start = 0; start < total; start += 1000) {
  const batch = []
  for (let i = start; i < Math.min(total, start + 1000); i++) {
    const reason = i % Number(every) === 0 ? 'selected' : 'failed'
    const envelope = annotate(make('urn:babel:orders:created', `{"order_id":${i + 1},"amount":99.90,"currency":"EUR"}`, {queue}), {reason, originalQueue: queue, error: 'Payment gateway timeout', failedAt: 1749132730000, attempts: 3})
    batch.push({body: envelope.toBuffer(), fields: fieldsOf(envelope)})
  }
  await adapter.publish(dlq, batch)
}
await adapter.close()
