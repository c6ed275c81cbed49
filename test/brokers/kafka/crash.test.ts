/**
 * SIGKILL during redrive on Apache Kafka (BQ_TEST_KAFKA_URL, default kafka://127.0.0.1:19092).
 *
 * At-least-once: the copies are published (acks=all), then the progress of the redrive group
 * `bq-redrive.<topic>` is committed; a kill between the two makes the next run send those again.
 * The suite's census needs no Kafka special case: count and browse of `<queue>.dlq` show what
 * the redrive group has not finished (the DLQ log itself keeps every record), so "every meta.id
 * survives" means each one is in the target topic or still waiting in the DLQ for the next run.
 */
import {after} from 'node:test'
import type {TestContext} from 'node:test'

import {requireBroker} from '../../support/brokers.js'
import {crashSuite} from '../../suites/crash-suite.js'
import {deleteTestTopics, kafkaHost, kafkaPort, kafkaUrl, withAdmin} from './support.js'

// The suite's topics (bqtest-crash<n>-…, with .dlq) would otherwise stay on the broker.
after(async () => {
  const topics = await withAdmin((admin) => admin.listTopics()).catch(() => [] as string[])
  const mine = topics.filter((topic) => topic.startsWith('bqtest-crash'))
  if (mine.length > 0) await deleteTestTopics(mine).catch(() => undefined)
})

crashSuite({
  name: 'kafka',
  url: () => kafkaUrl,
  available: (t: TestContext) => requireBroker(t, 'Kafka', kafkaHost, kafkaPort),
  // 10,000 per trial, as on the other slow series (BQ_CRASH_MESSAGES=20000 for the full size).
  messages: 10_000,
})
