/**
 * `bq trace` on Pulsar (the shared trace suite): topics are read with a reader (a true peek);
 * the second context is an embedded store. The snapshot is each topic's message counter and its
 * durable subscriptions' backlogs and unacked counts: a trace must create, move or ack nothing.
 */
import {after} from 'node:test'

import {traceSuite} from '../../suites/trace-suite.js'
import {admin, available, pulsarUrl, topicPath} from './support.js'

const used = new Set<string>()
after(async () => {
  for (const queue of used) await fetch(`${admin.origin}/admin/v2/${topicPath(queue)}?force=true`, {method: 'DELETE'}).catch(() => undefined)
})

interface TopicStats {
  msgInCounter?: number
  subscriptions?: Record<string, {msgBacklog?: number; unackedMessages?: number; isDurable?: boolean}>
}

async function snapshot(queues: string[]): Promise<unknown> {
  const out: Record<string, unknown> = {}
  for (const queue of queues) {
    used.add(queue)
    const response = await fetch(`${admin.origin}/admin/v2/${topicPath(queue)}/stats`)
    if (!response.ok) {
      out[queue] = response.status
      continue
    }
    const stats = (await response.json()) as TopicStats
    const durable = Object.entries(stats.subscriptions ?? {}).filter(([, s]) => s.isDurable !== false)
    out[queue] = {in: stats.msgInCounter, subscriptions: Object.fromEntries(durable.map(([name, s]) => [name, [s.msgBacklog, s.unackedMessages]]).sort())}
  }
  return out
}

traceSuite({name: 'Pulsar', url: () => pulsarUrl, available, snapshot})
