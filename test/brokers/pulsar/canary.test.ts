/** Canary redrive on Apache Pulsar: the watch peeks the DLQ's backlog through the admin API. */
import type {TestContext} from 'node:test'

import {canarySuite} from '../../suites/canary-suite.js'
import {requireBroker} from '../../support/brokers.js'

const pulsarUrl = process.env.BQ_TEST_PULSAR_URL ?? 'pulsar://127.0.0.1:6650?admin=http://127.0.0.1:8080'
const admin = new URL(new URL(pulsarUrl).searchParams.get('admin') ?? 'http://127.0.0.1:8080')

canarySuite({
  name: 'pulsar',
  url: () => pulsarUrl,
  available: (t: TestContext) => requireBroker(t, 'Pulsar (admin/WebSocket port)', admin.hostname, Number(admin.port || 8080)),
  tests: ['abort', 'ramp'],
})
