/**
 * The shared broker contract on the Service Bus adapter, through the registry as `bq` opens it:
 * against bq's Service Bus test server (test/brokers/service-bus/server/, started here), and against a real
 * namespace when BQ_TEST_ASB_CONNECTION_STRING is set.
 *
 * Not exercised here: the atomic move (Service Bus has none across a send and a complete) and the
 * contract's crash test (no `crashDrain`). The adapter declares `afterCrash: 'timeout-returns'`,
 * whose branch expects a dead run's reservations to be out of the count until the broker returns
 * them; on Service Bus they stay locked but still show in a peek (which cannot see locks), and
 * count is a peek, until their locks expire. adapter.test.ts kills a draining process
 * and checks that.
 */
import {after, before, describe, it} from 'node:test'

import {openBroker} from '../../../src/lib/brokers/registry.js'
import {RealNamespace, realConnectionString} from './server/real-namespace.js'
import {startServiceBusTestServer, type ServiceBusTestServer} from './server/server.js'
import {brokerContractSuite} from '../../suites/contract-suite.js'

let server: ServiceBusTestServer
before(async () => {
  server = await startServiceBusTestServer()
})
after(() => server.close())

brokerContractSuite('service-bus', {
  open: () => openBroker(server.connectionString),
  available: async () => true,
  secrets: [],
  // The test server creates entities on first use; adapter.test.ts checks a missing one on a server that does not.
  createsQueuesOnFirstUse: true,
})

const realUrl = realConnectionString
if (realUrl !== undefined) {
  const real = new RealNamespace(realUrl)
  brokerContractSuite('service-bus real namespace', {
    open: async () => real.wrap(await openBroker(realUrl)),
    available: async () => true,
    // A Standard namespace takes 256 KB per message.
    maxBodyBytes: Number(process.env.BQ_TEST_ASB_MAX_BODY ?? 200_000),
    cleanup: () => real.cleanup(),
  })
} else {
  describe('service-bus broker contract against a real namespace', () => {
    it('SKIPPED: no real Service Bus is reachable here; set BQ_TEST_ASB_CONNECTION_STRING (a Manage connection string) to run the contract against one', (t) => {
      t.skip('BQ_TEST_ASB_CONNECTION_STRING is not set')
    })
  })
}
