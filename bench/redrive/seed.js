// Seeds a DLQ (<queue>.dlq, or DLQ when given) with N dead-lettered envelopes through bq's own
// adapter (from dist/). Shared by every bench directory.
// Usage: node bench/redrive/seed.js URL QUEUE N   |   node bench/redrive/seed.js URL QUEUE DLQ N
import {openBroker} from '../../dist/lib/brokers/registry.js'
import {annotate, fieldsOf, make} from '../../dist/lib/envelope/index.js'

const args = process.argv.slice(2)
const [url, queue] = args
const [dlq, n] = args.length >= 4 ? [args[2], args[3]] : [`${queue}.dlq`, args[2]]
const adapter = await openBroker(url)
const total = Number(n)
for (let start = 0; start < total; start += 1000) {
  const batch = []
  for (let i = start; i < Math.min(total, start + 1000); i++) {
    const envelope = annotate(make('urn:babel:orders:created', `{"order_id":${i + 1},"amount":99.90,"currency":"EUR"}`, {queue}), {reason: 'failed', originalQueue: queue, error: 'Payment gateway timeout', failedAt: 1749132730000, attempts: 3})
    batch.push({body: envelope.toBuffer(), fields: fieldsOf(envelope)})
  }
  await adapter.publish(dlq, batch)
}
await adapter.close()
