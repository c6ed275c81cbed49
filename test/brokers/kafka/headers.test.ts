/** Application headers (record headers) through browse, redrive and export → replay on Kafka. */
import type {TestContext} from 'node:test'

import {requireBroker} from '../../support/brokers.js'
import {headersSuite} from '../../suites/headers-suite.js'

const kafkaUrl = process.env.BQ_TEST_KAFKA_URL ?? 'kafka://127.0.0.1:19092'
const firstBroker = /^kafka:\/\/(?:[^@/]*@)?([^,/?]+)/.exec(kafkaUrl)?.[1] ?? '127.0.0.1:19092'

headersSuite({
  name: 'kafka',
  url: () => kafkaUrl,
  available: (t: TestContext) => requireBroker(t, 'Kafka', firstBroker.replace(/:\d+$/, ''), Number(/:(\d+)$/.exec(firstBroker)?.[1] ?? 9092)),
})
