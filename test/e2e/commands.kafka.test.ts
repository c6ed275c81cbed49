/** Every command end to end on Apache Kafka (BQ_TEST_KAFKA_URL, default kafka://127.0.0.1:19092). */
import type {TestContext} from 'node:test'

import {requireBroker} from '../support/brokers.js'
import {commandSuite, type BrokerCase} from './command-suite.js'

const kafkaUrl = process.env.BQ_TEST_KAFKA_URL ?? 'kafka://127.0.0.1:19092'
const firstBroker = /^kafka:\/\/(?:[^@/]*@)?([^,/?]+)/.exec(kafkaUrl)?.[1] ?? '127.0.0.1:19092'

const kafka: BrokerCase = {
  name: 'kafka',
  url: () => kafkaUrl,
  available: (t: TestContext) => requireBroker(t, 'Kafka', firstBroker.replace(/:\d+$/, ''), Number(/:(\d+)$/.exec(firstBroker)?.[1] ?? 9092)),
  // Reading fetches by offset: no consumer group, nothing committed.
  truePeek: true,
  headers: true,
  delay: false,
}

commandSuite(kafka)
