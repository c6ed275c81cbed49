/**
 * `bq trace` on RabbitMQ (the shared trace suite). A read here is a delivery (no true peek): trace
 * names the queues it did not read and reads them only with --accept-delivery-cost. Unacked
 * messages are counts only, so nothing is held in flight; the second context is an embedded store.
 * The snapshot is each queue's ready count from a passive declare (exact, unlike the management
 * API's figures, which lag).
 */
import amqp from 'amqplib'

import {requireBroker} from '../../support/brokers.js'
import {amqpUrl} from '../../suites/command-suite.js'
import {traceSuite} from '../../suites/trace-suite.js'

const parsed = new URL(amqpUrl)
const available = (t: Parameters<typeof requireBroker>[0]) => requireBroker(t, 'RabbitMQ', parsed.hostname, Number(parsed.port || 5672))

async function snapshot(queues: string[]): Promise<unknown> {
  const connection = await amqp.connect(amqpUrl)
  const counts: Record<string, number | null> = {}
  try {
    for (const queue of queues) {
      // A passive declare of a missing queue closes its channel: one channel per queue.
      const channel = await connection.createChannel()
      channel.on('error', () => undefined)
      try {
        const ok = await channel.checkQueue(queue)
        counts[queue] = ok.messageCount
        await channel.close()
      } catch {
        counts[queue] = null
      }
    }
  } finally {
    await connection.close()
  }
  return counts
}

traceSuite({name: 'RabbitMQ', url: () => amqpUrl, available, snapshot, readsCost: true})
