/**
 * SIGKILL during redrive on Apache Pulsar (BQ_TEST_PULSAR_URL, default the standalone of
 * `test/brokers/brokers.sh start pulsar`). At least once: a copy Pulsar stored whose original was
 * not acknowledged yet survives twice; nothing may be lost.
 *
 * A killed run stages nothing: its WebSocket consumer drops, the broker closes it and the
 * messages it held stay un-acknowledged in the bq-redrive subscription (`bq dlq recover` has
 * nothing to do). The census reads through a reader, so it needs no settling.
 *
 * 2,000 messages per trial instead of 20,000: the standalone on this 2-core machine, next to the
 * other test brokers, stores about 1,000 messages/s through the WebSocket producer and a redrive
 * moves about 450/s (bench/pulsar), so each 20,000-message trial (seed, redrive, census, clean-up
 * of two topics) takes about two minutes and 21 trials well over half an hour.
 * BQ_CRASH_MESSAGES=20000 runs the full size.
 */
import type {TestContext} from 'node:test'

import {requireBroker} from '../support/brokers.js'
import {crashSuite} from './crash-suite.js'

const pulsarUrl = process.env.BQ_TEST_PULSAR_URL ?? 'pulsar://127.0.0.1:6650?admin=http://127.0.0.1:8080'
const admin = new URL(new URL(pulsarUrl).searchParams.get('admin') ?? 'http://127.0.0.1:8080')

crashSuite({
  name: 'pulsar',
  url: () => pulsarUrl,
  exactlyOnce: false,
  available: (t: TestContext) => requireBroker(t, 'Pulsar (admin/WebSocket port)', admin.hostname, Number(admin.port || 8080)),
  messages: 2000,
})
