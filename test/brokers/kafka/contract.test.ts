/**
 * The shared broker contract against Apache Kafka (BQ_TEST_KAFKA_URL, default
 * kafka://127.0.0.1:19092), opened through the registry as `bq` does.
 *
 * How Kafka meets the queue contract: "the queue" is what the redrive group `bq-redrive.<topic>`
 * has not finished (kafka/state.ts). Ack commits progress; release leaves the record waiting in
 * place, so a released record is seen again by the next drain, in its original position, and
 * every contract test holds as written, including order.
 *
 * - maxBodyBytes: a topic's default max.message.bytes is 1 MiB + 12 bytes for a whole record
 *   batch, so the 1 MiB round-trip body is sent a little smaller.
 * - A crashed drain: the adapter declares `afterCrash: 'nothing-reserved'` (a Kafka drain reserves
 *   nothing on the broker: a killed run's uncommitted records simply wait in the log, and
 *   `recover()` returns 0), and the suite's crash test checks exactly that after a drain process
 *   exits without closing; a crash after some acks is tested in adapter.test.ts and by the
 *   SIGKILL suite.
 */
import type {TestContext} from 'node:test'

import {openBroker} from '../../../src/lib/brokers/registry.js'
import {requireBroker} from '../../support/brokers.js'
import {brokerContractSuite} from '../../suites/contract-suite.js'
import {runFixture} from '../../suites/fixtures/run-fixture.js'
import {deleteTestTopics, kafkaHost, kafkaPort, kafkaUrl} from './support.js'

brokerContractSuite('kafka', {
  open: () => openBroker(kafkaUrl),
  available: (t: TestContext) => requireBroker(t, 'Kafka', kafkaHost, kafkaPort),
  maxBodyBytes: 1_000_000,
  cleanup: deleteTestTopics,
  crashDrain: async (q, take, release) => {
    await runFixture('crash-drain.ts', [kafkaUrl, q, String(take), String(release)])
  },
})
