/**
 * Network faults between bq and Service Bus (bq's test server, started here), through the fault
 * proxy: the outage only. The test server checks each SAS token's audience against its own
 * sb://host:port, and through the proxy the port differs, so entity operations are refused; the
 * mid-run tests would need the server to accept the proxy's address.
 */
import {after, before} from 'node:test'

import {startServiceBusTestServer, type ServiceBusTestServer} from './server/server.js'
import {faultSuite} from '../../suites/fault-suite.js'

let server: ServiceBusTestServer
before(async () => {
  server = await startServiceBusTestServer()
})
after(() => server.close())

faultSuite({
  name: 'Service Bus',
  directUrl: () => server.connectionString,
  upstream: () => ({host: server.host, port: server.port}),
  proxiedUrl: (proxyPort) => server.connectionString.replace(`:${server.port}/`, `:${proxyPort}/`),
  available: async () => true,
  midRun: false,
  // `<queue>.dlq` is a Service Bus queue: it counts deliveries.
  redriveFlags: ['--accept-delivery-cost'],
})
