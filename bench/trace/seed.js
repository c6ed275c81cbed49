// Seeds N envelopes over Q Redis lists `<prefix><i>` (pipelined RPUSH of 1,000), three of them
// carrying the traced id at the start, middle and end. Prints the trace id.
// Usage: node bench/trace/seed.js REDIS_URL PREFIX N Q
import {randomUUID} from 'node:crypto'
import Redis from 'ioredis'

import {make} from '../../dist/lib/envelope/index.js'

const [url, prefix, n, q] = process.argv.slice(2)
const total = Number(n)
const queues = Number(q)
const traceId = randomUUID()
const marked = new Set([0, Math.floor(total / 2), total - 1])
const redis = new Redis(url)
const perQueue = Math.ceil(total / queues)
for (let queue = 0; queue < queues; queue++) {
  const key = `${prefix}${queue}`
  const count = Math.min(perQueue, total - queue * perQueue)
  for (let start = 0; start < count; start += 1000) {
    const batch = []
    for (let i = start; i < Math.min(count, start + 1000); i++) {
      const index = queue * perQueue + i
      const envelope = make('urn:babel:orders:created', `{"order_id":${index + 1},"amount":99.90,"currency":"EUR","sku":"SKU-${index % 977}"}`, {queue: key, ...(marked.has(index) ? {traceId} : {})})
      batch.push(envelope.toBuffer())
    }
    await redis.rpush(key, ...batch)
  }
}
console.log(traceId)
await redis.quit()
