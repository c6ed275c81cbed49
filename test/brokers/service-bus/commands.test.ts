/** Every command end to end on Azure Service Bus: the built CLI against bq's Service Bus test server (test/brokers/service-bus/server/). */
import {after, before} from 'node:test'

import {startServiceBusTestServer, type ServiceBusTestServer} from './server/server.js'
import {commandSuite} from '../../suites/command-suite.js'

let server: ServiceBusTestServer
before(async () => {
  server = await startServiceBusTestServer()
})
after(() => server.close())

commandSuite({
  name: 'service-bus',
  url: () => server.connectionString,
  available: async () => true,
})
