import type {BrokerAdapter, ListedQueue} from '../brokers/adapter.js'
import {AuthError, BqError, ConnectionError} from '../errors.js'
import {dlqsAmong} from './dlq-list.js'
import {globToRegExp} from './match.js'

/**
 * Where `bq trace` looks on one broker: every queue and DLQ as `bq dlq ls` finds them
 * (adapter.listQueues), the SDK retry tiers next to them (adapter.relatedQueues: Kafka's
 * `<topic>.retry.<n>`), queues known only by their in-flight or staging keys (adapter.queuesAside:
 * Redis), and for each queue its in-flight elements (adapter.inflight, as `bq inflight ls` reads
 * them: Redis `:processing`, Laravel `:reserved`/`:delayed`, the embedded store's reserved rows)
 * and bq's own staging place (adapter.staged: Redis `:bq-held`). Where the broker cannot list its
 * queues (Service Bus without its management API), the queues named by --queue without a wildcard
 * are read all the same.
 */

/** The --queue globs: a queue is looked at when one of them matches its name (none given: every queue). */
export class QueueFilter {
  private readonly patterns: RegExp[]

  constructor(readonly globs: string[]) {
    this.patterns = globs.map((glob) => globToRegExp(glob))
  }

  matches(queue: string): boolean {
    return this.patterns.length === 0 || this.patterns.some((pattern) => pattern.test(queue))
  }

  /** The globs that name one queue (no `*` or `?`). */
  literals(): string[] {
    return this.globs.filter((glob) => !/[*?]/.test(glob))
  }
}

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

export async function traceSources(adapter: BrokerAdapter, filter = new QueueFilter([])): Promise<TraceSource[]> {
  let listed: ListedQueue[]
  try {
    listed = await adapter.listQueues()
  } catch (error) {
    // A broker that cannot list: the queues --queue names one by one are still read.
    const literals = filter.literals()
    if (literals.length === 0 || !(error instanceof BqError) || error instanceof ConnectionError || error instanceof AuthError) throw error
    listed = literals.map((queue) => ({queue}))
  }
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
    if (!filter.matches(queue)) continue
    const role = roles.get(queue)
    sources.push({queue, read: 'browse', state: dead.has(queue) ? 'dead' : 'waiting', ...(role === undefined ? {} : {role})})
    // A log broker's in-flight figures are consumer lag: its records are read from the log itself.
    if (adapter.inflight !== undefined && !adapter.capabilities.logBrowse) sources.push({queue, read: 'inflight', state: 'in flight'})
    if (adapter.staged !== undefined) sources.push({queue, read: 'staged', state: 'staged'})
  }
  return sources
}
