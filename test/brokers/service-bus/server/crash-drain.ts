/**
 * Fixture: drains `take` messages from a Service Bus queue, releases the first `release` of them,
 * prints "taken", and dies without closing (SIGKILL from the test, or process.exit here): the
 * locks it held are then only given back by their expiry.
 * Usage: node --import tsx test/brokers/service-bus/server/crash-drain.ts <connection string> <queue> <take> <release>
 */
import {openBroker} from '../../../../src/lib/brokers/registry.js'

const [url, queue, take, release] = process.argv.slice(2)
const adapter = await openBroker(url)
const session = await adapter.drain(queue)
const taken = []
while (taken.length < Number(take)) {
  const batch = await session.next(Number(take) - taken.length)
  if (batch.length === 0) break
  taken.push(...batch)
}
await session.release(taken.slice(0, Number(release)))
process.stdout.write(`taken ${taken.length}\n`)
process.exit(0)
