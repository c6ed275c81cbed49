/** Canary redrive on ActiveMQ Artemis: the watch browses the DLQ. */
import type {TestContext} from 'node:test'

import {canarySuite} from '../../suites/canary-suite.js'
import {requireBroker} from '../../support/brokers.js'

const artemisUrl = process.env.BQ_TEST_ARTEMIS_URL ?? 'artemis://bq:bq@127.0.0.1:5673'
const parsed = new URL(artemisUrl)

canarySuite({
  name: 'artemis',
  url: () => artemisUrl,
  available: (t: TestContext) => requireBroker(t, 'Artemis', parsed.hostname, Number(parsed.port || 5672)),
  tests: ['abort', 'ramp'],
})

