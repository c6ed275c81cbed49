/** Canary redrive on Azure Service Bus (bq's test server): the watch peeks; the DLQ queue counts deliveries, so the redrive needs --accept-delivery-cost. */
import {after, before} from 'node:test'

import {canarySuite} from '../../suites/canary-suite.js'
import {startServiceBusTestServer, type ServiceBusTestServer} from './server/server.js'

let server: ServiceBusTestServer
before(async () => {
  server = await startServiceBusTestServer()
})
after(() => server.close())

canarySuite({
  name: 'service-bus',
  url: () => server.connectionString,
  available: async () => true,
  redriveFlags: ['--accept-delivery-cost'],
  tests: ['abort', 'ramp'],
})
