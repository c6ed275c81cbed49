/**
 * `bq trace` on Azure Service Bus, against bq's Service Bus test server (the shared trace suite):
 * queues are read with a peek (a true one: no lock, no delivery count); locked messages are counts
 * only, and a peek sees them as waiting, so nothing is held. The connection string has no place
 * for a password reference, so it is read with -b beside the second context (an embedded store).
 * The test server has no management API to list queues: the suite names them with --queue. The
 * snapshot is what a peek shows: each message's sequence number and delivery count.
 */
import {after, before} from 'node:test'

import {ServiceBusClient} from '@azure/service-bus'

import {traceSuite} from '../../suites/trace-suite.js'
import {startServiceBusTestServer, type ServiceBusTestServer} from './server/server.js'

let server: ServiceBusTestServer
before(async () => {
  server = await startServiceBusTestServer()
})
after(() => server.close())

async function snapshot(queues: string[]): Promise<unknown> {
  // A client of its own each time: a client's peeks go on from where its last one ended.
  const client = new ServiceBusClient(server.connectionString)
  const out: Record<string, unknown> = {}
  try {
    for (const queue of queues) {
      const receiver = client.createReceiver(queue, {skipParsingBodyAsJson: true})
      const peeked = await receiver.peekMessages(1000)
      out[queue] = peeked.map((m) => [String(m.sequenceNumber), m.deliveryCount])
      await receiver.close()
    }
  } finally {
    await client.close()
  }
  return out
}

traceSuite({name: 'Service Bus', url: () => server.connectionString, available: async () => true, snapshot, contextless: true, unlistable: true})
