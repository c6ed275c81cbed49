import type {BrokerAdapter} from '../brokers/adapter.js'
import {dlqsAmong} from './dlq-list.js'

/**
 * Where `bq trace` looks on one broker: every queue and DLQ as `bq dlq ls` finds them
 * (adapter.listQueues), the SDK retry tiers next to them (adapter.relatedQueues: Kafka's
 * `<topic>.retry.<n>`), queues known only by their in-flight or staging keys (adapter.queuesAside:
 * Redis), and for each queue its in-flight elements (adapter.inflight, as `bq inflight ls` reads
 * them: Redis `:processing`, Laravel `:reserved`/`:delayed`, the embedded store's reserved rows)
 * and bq's own staging place (adapter.staged: Redis `:bq-held`).
 */

export type TraceState = 'waiting' | 'dead' | 'in flight' | 'staged'

export interface TraceSource {
  queue: string
  /** How it is read: a browse of the queue, its in-flight elements, or bq's staging place. */
  read: 'browse' | 'inflight' | 'staged'
  /** What a message found there is: waiting in a queue, dead in a DLQ, in flight, staged by bq. */
  state: TraceState
  /** What the queue is, when more than its name says (`retry tier 1`). */
  role?: string
}

export async function traceSources(adapter: BrokerAdapter, match?: RegExp): Promise<TraceSource[]> {
  const listed = await adapter.listQueues()
  const names = new Set(listed.map((q) => q.queue))
  const dead = new Set(dlqsAmong(listed).map((q) => q.queue))
  const roles = new Map<string, string>()
  if (adapter.relatedQueues !== undefined) {
    for (const dlq of dead) {
      for (const related of await adapter.relatedQueues(dlq).catch(() => [])) {
        if (related.queue === dlq) continue
        names.add(related.queue)
        roles.set(related.queue, related.role)
      }
    }
  }
  for (const queue of (await adapter.queuesAside?.()) ?? []) names.add(queue)
  const sources: TraceSource[] = []
  for (const queue of [...names].sort()) {
    if (match !== undefined && !match.test(queue)) continue
    const role = roles.get(queue)
    sources.push({queue, read: 'browse', state: dead.has(queue) ? 'dead' : 'waiting', ...(role === undefined ? {} : {role})})
    if (adapter.inflight !== undefined) sources.push({queue, read: 'inflight', state: 'in flight'})
    if (adapter.staged !== undefined) sources.push({queue, read: 'staged', state: 'staged'})
  }
  return sources
}
