/**
 * The shared broker contract against Apache Pulsar (BQ_TEST_PULSAR_URL, default the standalone
 * that `test/brokers/brokers.sh start pulsar` runs: pulsar://127.0.0.1:6650?admin=http://127.0.0.1:8080),
 * opened through the registry as `bq` does.
 *
 * Where Pulsar differs by nature the suite branches on the adapter's capabilities, none skipped
 * silently:
 * - A crashed drain stages nothing: its un-acknowledged messages stay in the subscription's
 *   backlog and the broker hands them out again once it sees the consumer gone
 *   (`afterCrash: 'broker-returns'`; `recover()` returns 0).
 * - The drain is bounded by the subscription's backlog when it started.
 * - No atomic move (a publish and an acknowledgement are two steps): that test skips itself.
 */
import type {TestContext} from 'node:test'

import {openBroker} from '../../../src/lib/brokers/registry.js'
import {requireBroker} from '../../support/brokers.js'
import {brokerContractSuite} from '../../suites/contract-suite.js'
import {runFixture} from '../../suites/fixtures/run-fixture.js'

export const pulsarUrl = process.env.BQ_TEST_PULSAR_URL ?? 'pulsar://127.0.0.1:6650?admin=http://127.0.0.1:8080'
const admin = new URL(new URL(pulsarUrl).searchParams.get('admin') ?? 'http://127.0.0.1:8080')
const available = (t: TestContext) => requireBroker(t, 'Pulsar (admin/WebSocket port)', admin.hostname, Number(admin.port || 8080))

/** Deletes the test topics (and their subscriptions), keeping the standalone's data small. */
async function cleanup(queues: string[]): Promise<void> {
  for (const queue of queues) {
    await fetch(`${admin.origin}/admin/v2/persistent/public/default/${encodeURIComponent(queue)}?force=true`, {method: 'DELETE'}).catch(() => undefined)
  }
}


brokerContractSuite('pulsar', {
  open: () => openBroker(pulsarUrl),
  available,
  crashDrain: async (q, take, release) => {
    await runFixture('crash-drain.ts', [pulsarUrl, q, String(take), String(release)])
  },
  cleanup,
})
