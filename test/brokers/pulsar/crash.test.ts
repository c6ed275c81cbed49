/**
 * SIGKILL during redrive on Apache Pulsar (BQ_TEST_PULSAR_URL, default the standalone of
 * `test/brokers/brokers.sh start pulsar`). At least once: a copy Pulsar stored whose original was
 * not acknowledged yet survives twice; nothing may be lost.
 *
 * A killed run stages nothing: its WebSocket consumer drops, the broker closes it and the
 * messages it held stay un-acknowledged in the bq-redrive subscription (`bq dlq recover` has
 * nothing to do). The census reads through a reader, so it needs no settling.
 *
 * 5,000 messages per trial: a 20,000-message trial (seed, redrive, census, clean-up of two
 * topics) took about 14 s, the series 283 s of CI, and at 10,000 it still took 83 s alone and
 * 254 s beside other files. A kill lands at a random point of the run either way (15-95% of a full
 * run's time), across the same batches and acknowledgement windows (BQ_CRASH_MESSAGES sets another
 * size; `BQ_CRASH_MESSAGES=20000 npm run soak` runs 20 trials of 20,000).
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
  messages: 5_000,
})
