// A consumer that acknowledges every message it takes from QUEUE (the canary bench's "fixed"
// consumer), through bq's own adapter (from dist/), until SIGTERM. Prints how many it took.
// Usage: node bench/canary/consumer.js URL QUEUE
import {openBroker} from '../../dist/lib/brokers/registry.js'

const [url, queue] = process.argv.slice(2)
const adapter = await openBroker(url)
let stopping = false
let taken = 0
process.on('SIGTERM', () => (stopping = true))
while (!stopping) {
  const session = await adapter.drain(queue, {max: 0})
  let got = 0
  while (!stopping) {
    const batch = await session.next(500)
    if (batch.length === 0) break
    got += batch.length
    await session.ack(batch)
  }
  await session.close()
  taken += got
  if (got === 0) await new Promise((resolve) => setTimeout(resolve, 20))
}
await adapter.close()
console.log(taken)
