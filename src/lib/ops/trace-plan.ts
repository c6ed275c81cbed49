import type {BrokerAdapter} from '../brokers/adapter.js'
import {QueueNotFoundError} from '../errors.js'
import {readCost} from './trace-cost.js'
import {traceSources} from './trace-sources.js'
import type {QueueFilter} from './trace-sources.js'

/**
 * `bq trace --plan`: the places a trace would read, before reading any message: each one's depth
 * (adapter.count, or the in-flight counts), what reading it costs, and an estimate of the time.
 */
export interface PlannedPlace {
  queue: string
  state: string
  /** Messages there, as the broker counts them; null where it has no count (bq's staging place). */
  depth: number | null
  /** How many of them a trace would read (depth capped by --max-scan). */
  would_read: number | null
  /** `free`, or what a read costs (then read only with --accept-delivery-cost). */
  cost: string
  /** Whether the trace would read it (a costly place without consent is skipped). */
  read: boolean
}

/**
 * Messages per second a trace reads, for the estimate only: a true peek in pages (measured on
 * Redis and the embedded store, bench/RESULTS.md, rounded down), and a read that takes and hands
 * back each message (a round trip per batch at best).
 */
const FREE_RATE = 50_000
const COSTLY_RATE = 1000
/** A listing or in-flight read, per place. */
const PER_PLACE_MS = 5

export async function planTrace(adapter: BrokerAdapter, options: {filter?: QueueFilter; maxScan: number; acceptDeliveryCost: boolean}): Promise<{places: PlannedPlace[]; estimated_seconds: number}> {
  const places: PlannedPlace[] = []
  let ms = 0
  for (const source of await traceSources(adapter, options.filter)) {
    let depth: number | null
    let cost: Awaited<ReturnType<typeof readCost>>
    try {
      cost = await readCost(adapter, source)
      if (source.read === 'browse') depth = await adapter.count(source.queue)
      else if (source.read === 'inflight') depth = await inflightDepth(adapter, source.queue)
      else depth = null
    } catch (error) {
      if (error instanceof QueueNotFoundError) continue
      throw error
    }
    const read = cost.free || options.acceptDeliveryCost
    const wouldRead = depth === null ? null : Math.min(depth, options.maxScan)
    if (read) ms += PER_PLACE_MS + ((wouldRead ?? 0) * 1000) / (cost.free ? FREE_RATE : COSTLY_RATE)
    places.push({queue: source.queue, state: source.state, depth, would_read: read ? wouldRead : 0, cost: cost.free ? 'free' : cost.why, read})
  }
  return {places, estimated_seconds: Math.round(ms / 100) / 10}
}

/** What the broker counts in flight for the queue: elements bq can read, or those it shows counts of. */
async function inflightDepth(adapter: BrokerAdapter, queue: string): Promise<number> {
  const report = await adapter.inflight!(queue, {limit: 0})
  return report.gauges.filter((g) => ['processing', 'reserved', 'delayed', 'unacked', 'not_visible', 'delivering', 'scheduled', 'deferred'].includes(g.name)).reduce((sum, g) => sum + g.value, 0)
}
