/**
 * SIGKILL during redrive on Apache Pulsar (BQ_TEST_PULSAR_URL, default the standalone of
 * `test/brokers/brokers.sh start pulsar`). At least once: a copy Pulsar stored whose original was
 * not acknowledged yet survives twice; nothing may be lost.
 *
 * A killed run stages nothing: its WebSocket consumer drops, the broker closes it and the
 * messages it held stay un-acknowledged in the bq-redrive subscription (`bq dlq recover` has
 * nothing to do). The census reads through a reader, so it needs no settling.
 *
 * 20,000 messages per trial: on a quiet machine one trial (seed, redrive, census, clean-up of
 * two topics) takes about 20 s against the standalone; under heavy load from other work it took
 * minutes (BQ_CRASH_MESSAGES scales it down for a quick local run).
 */
import type {TestContext} from 'node:test'

import {requireBroker} from '../../support/brokers.js'
import {crashSuite} from '../../suites/crash-suite.js'

const pulsarUrl = process.env.BQ_TEST_PULSAR_URL ?? 'pulsar://127.0.0.1:6650?admin=http://127.0.0.1:8080'
const admin = new URL(new URL(pulsarUrl).searchParams.get('admin') ?? 'http://127.0.0.1:8080')

crashSuite({
  name: 'pulsar',
  url: () => pulsarUrl,
  available: (t: TestContext) => requireBroker(t, 'Pulsar (admin/WebSocket port)', admin.hostname, Number(admin.port || 8080)),
})
