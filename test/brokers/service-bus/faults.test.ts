/**
 * Network faults between bq and Service Bus (bq's test server, started here), through the fault
 * proxy. bq signs its SAS tokens for the address it connects to, the proxy's port, so the server
 * is told to accept its own host on any port (real Service Bus audiences carry no port).
 */
import {after, before} from 'node:test'

import {startServiceBusTestServer, type ServiceBusTestServer} from './server/server.js'
import {faultSuite} from '../../suites/fault-suite.js'

let server: ServiceBusTestServer
before(async () => {
  server = await startServiceBusTestServer({audienceAnyPort: true})
})
after(() => server.close())

faultSuite({
  name: 'Service Bus',
  directUrl: () => server.connectionString,
  upstream: () => ({host: server.host, port: server.port}),
  proxiedUrl: (proxyPort) => server.connectionString.replace(`:${server.port}/`, `:${proxyPort}/`),
  available: async () => true,
  midRun: true,
  // `<queue>.dlq` is a Service Bus queue: it counts deliveries.
  redriveFlags: ['--accept-delivery-cost'],
})
