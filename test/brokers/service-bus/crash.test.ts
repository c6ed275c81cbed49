/**
 * SIGKILL during redrive on Azure Service Bus (bq's test server, started here). At least once:
 * the killed run's locked messages stay on the DLQ (a peek still lists them) and Service Bus
 * returns them when their locks expire; a copy already sent may exist twice.
 *
 * Scaled down to 2,000 messages per trial (BQ_CRASH_MESSAGES overrides): the test
 * server runs inside this test process on a 2-core machine, and what is checked (every meta.id
 * survives a kill at a random moment) does not depend on the size once a run spans several batches.
 * The full size (BQ_CRASH_MESSAGES=20000, 20 trials) takes about 16 minutes here and passed when
 * run by hand on 2026-11-30 (every trial killed mid-run).
 */
import {after, before} from 'node:test'

import {startServiceBusTestServer, type ServiceBusTestServer} from './server/server.js'
import {crashSuite} from '../../suites/crash-suite.js'

let server: ServiceBusTestServer
before(async () => {
  server = await startServiceBusTestServer()
})
after(() => server.close())

// `<queue>.dlq` is a Service Bus queue: it counts deliveries (its MaxDeliveryCount), so a redrive needs consent.
crashSuite({name: 'service-bus', url: () => server.connectionString, available: async () => true, messages: 2000, redriveFlags: ['--accept-delivery-cost']})
