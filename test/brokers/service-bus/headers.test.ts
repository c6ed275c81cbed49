/** Application headers (application properties) through browse, redrive and export → replay on Service Bus (bq's test server). */
import {after, before} from 'node:test'

import {startServiceBusTestServer, type ServiceBusTestServer} from './server/server.js'
import {headersSuite} from '../../suites/headers-suite.js'

let server: ServiceBusTestServer
before(async () => {
  server = await startServiceBusTestServer()
})
after(() => server.close())

headersSuite({
  name: 'service-bus',
  url: () => server.connectionString,
  available: async () => true,
  createsQueuesOnFirstUse: true,
  // The DLQ `<queue>.dlq` is a queue: it dead-letters at its MaxDeliveryCount (delivery-cost.test.ts).
  redriveFlags: ['--accept-delivery-cost'],
})
