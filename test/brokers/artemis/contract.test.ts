/**
 * The broker contract against a real ActiveMQ Artemis (BQ_TEST_ARTEMIS_URL, default
 * artemis://bq:bq@127.0.0.1:5673; `bash test/brokers/brokers.sh start artemis`).
 * Every queue a test creates is destroyed at the end through Artemis's management API.
 */
import type {TestContext} from 'node:test'

import {openBroker} from '../../../src/lib/brokers/registry.js'
import {requireBroker} from '../../support/brokers.js'
import {destroyQueues} from './support.js'
import {brokerContractSuite} from '../../suites/contract-suite.js'
import {runFixture} from '../../suites/fixtures/run-fixture.js'

const url = process.env.BQ_TEST_ARTEMIS_URL ?? 'artemis://bq:bq@127.0.0.1:5673'
const parsed = new URL(url)

brokerContractSuite('artemis', {
  open: () => openBroker(url),
  available: (t: TestContext) => requireBroker(t, 'Artemis', parsed.hostname, Number(parsed.port || 5672)),
  crashDrain: async (q, take, release) => {
    await runFixture('crash-drain.ts', [url, q, String(take), String(release)])
  },
  cleanup: (queues) => destroyQueues(url, queues),
  // The test password equals the user name, which displayUrl rightly keeps.
  secrets: parsed.password === '' || parsed.password === parsed.username ? [] : [decodeURIComponent(parsed.password)],
})
