/** Canary redrive on Kafka: the watch browses the DLQ topic; the records a stage consumed keep their old dead_letter block and are not counted as returns. */
import type {TestContext} from 'node:test'

import {canarySuite} from '../../suites/canary-suite.js'
import {requireBroker} from '../../support/brokers.js'

const kafkaUrl = process.env.BQ_TEST_KAFKA_URL ?? 'kafka://127.0.0.1:19092'
const firstBroker = /^kafka:\/\/(?:[^@/]*@)?([^,/?]+)/.exec(kafkaUrl)?.[1] ?? '127.0.0.1:19092'

canarySuite({
  name: 'kafka',
  url: () => kafkaUrl,
  available: (t: TestContext) => requireBroker(t, 'Kafka', firstBroker.replace(/:\d+$/, ''), Number(/:(\d+)$/.exec(firstBroker)?.[1] ?? 9092)),
  tests: ['abort', 'ramp'],
})
