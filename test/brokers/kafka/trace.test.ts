/**
 * `bq trace` on Kafka (the shared trace suite): the whole retained log of each topic is read, the
 * DLQ included; in flight is consumer lag (counts), so nothing is held; the second context is an
 * embedded store. The snapshot is each topic's watermarks and the consumer groups that read it:
 * a trace must commit nothing.
 */
import {after} from 'node:test'

import {requireBroker} from '../../support/brokers.js'
import {traceSuite} from '../../suites/trace-suite.js'
import {deleteTestTopics, kafkaHost, kafkaPort, kafkaUrl, withAdmin} from './support.js'

const used = new Set<string>()
after(() => deleteTestTopics([...used]))

async function snapshot(queues: string[]): Promise<unknown> {
  return withAdmin(async (admin) => {
    const topics = new Set(await admin.listTopics())
    const out: Record<string, unknown> = {}
    for (const queue of queues) {
      used.add(queue)
      out[queue] = topics.has(queue) ? (await admin.fetchTopicOffsets(queue)).map((p) => [p.partition, p.low, p.high]) : null
    }
    // No group of bq's own appears: a trace reads with no committed position.
    out.groups = (await admin.listGroups()).groups.map((g) => g.groupId).filter((id) => queues.some((queue) => id.includes(queue))).sort()
    return out
  })
}

traceSuite({name: 'Kafka', url: () => kafkaUrl, available: (t) => requireBroker(t, 'Kafka', kafkaHost, kafkaPort), snapshot})
