/** Shared helpers for the Kafka tests: the test URL, a raw kafkajs client, and cleanup. */
import kafkajs, {type Admin, type Kafka} from 'kafkajs'

import {redriveGroup} from '../../../src/lib/brokers/kafka/adapter.js'
import {leaseGroup} from '../../../src/lib/brokers/kafka/lease.js'

const {Kafka: KafkaClient, logLevel} = kafkajs

export const kafkaUrl = process.env.BQ_TEST_KAFKA_URL ?? 'kafka://127.0.0.1:19092'
const firstBroker = /^kafka:\/\/(?:[^@/]*@)?([^,/?]+)/.exec(kafkaUrl)?.[1] ?? '127.0.0.1:19092'
export const kafkaHost = firstBroker.replace(/:\d+$/, '')
export const kafkaPort = Number(/:(\d+)$/.exec(firstBroker)?.[1] ?? 9092)

/** A plain kafkajs client on the test broker, for checking what is on the wire. */
export function rawKafka(): Kafka {
  return new KafkaClient({brokers: [firstBroker], clientId: 'bq-test', logLevel: logLevel.NOTHING})
}

export async function withAdmin<T>(work: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = rawKafka().admin()
  await admin.connect()
  try {
    return await work(admin)
  } finally {
    await admin.disconnect()
  }
}

/** Deletes test topics (and their companions, redrive and lease groups) so the broker does not fill up. */
export async function deleteTestTopics(queues: string[]): Promise<void> {
  await withAdmin(async (admin) => {
    const existing = new Set(await admin.listTopics())
    const topics = [...existing].filter((topic) => queues.some((queue) => topic === queue || topic.startsWith(`${queue}.`)))
    if (topics.length > 0) await admin.deleteTopics({topics, timeout: 30_000}).catch(() => undefined)
    const groups = topics.flatMap((topic) => [redriveGroup(topic), leaseGroup(topic)])
    if (groups.length > 0) await admin.deleteGroups(groups).catch(() => undefined)
  })
}
