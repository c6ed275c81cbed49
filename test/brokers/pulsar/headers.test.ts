/** Application headers (message properties) through browse, redrive and export → replay on Pulsar. */
import type {TestContext} from 'node:test'

import {requireBroker} from '../../support/brokers.js'
import {headersSuite} from '../../suites/headers-suite.js'

const pulsarUrl = process.env.BQ_TEST_PULSAR_URL ?? 'pulsar://127.0.0.1:6650?admin=http://127.0.0.1:8080'
const admin = new URL(new URL(pulsarUrl).searchParams.get('admin') ?? 'http://127.0.0.1:8080')

headersSuite({
  name: 'pulsar',
  url: () => pulsarUrl,
  available: (t: TestContext) => requireBroker(t, 'Pulsar (admin/WebSocket port)', admin.hostname, Number(admin.port || 8080)),
})
