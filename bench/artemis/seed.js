// Seeds <queue>.dlq on Artemis with N dead-lettered envelopes through bq's own adapter (from dist/).
// Usage: node bench/artemis/seed.js URL QUEUE N
import {openBroker} from '../../dist/lib/brokers/registry.js'
import {annotate, fieldsOf, make} from '../../dist/lib/envelope/index.js'

const [url, queue, n] = process.argv.slice(2)
const adapter = await openBroker(url)
const total = Number(n)
for (let start = 0; start < total; start += 1000) {
  const batch = []
  for (let i = start; i < Math.min(total, start + 1000); i++) {
    const envelope = annotate(make('urn:babel:orders:created', `{"order_id":${i + 1},"amount":99.90,"currency":"EUR"}`, {queue}), {reason: 'failed', originalQueue: queue, error: 'Payment gateway timeout', failedAt: 1749132730000, attempts: 3})
    batch.push({body: envelope.toBuffer(), fields: fieldsOf(envelope)})
  }
  await adapter.publish(`${queue}.dlq`, batch)
}
await adapter.close()
