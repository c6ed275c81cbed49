import type {BrokerAdapter} from '../brokers/adapter.js'
import {AuthError, BqError, ConnectionError, QueueNotFoundError} from '../errors.js'
import {readCost} from './trace-cost.js'
import type {TraceTarget} from './trace-id.js'
import {scanSource} from './trace-scan.js'
import type {Sighting} from './trace-scan.js'
import {traceSources} from './trace-sources.js'
import type {QueueFilter, TraceSource} from './trace-sources.js'

/**
 * `bq trace` on one broker: every place trace-sources.ts names, each read within the limits, a
 * place whose read would cost a delivery skipped (and named) unless the operator accepted that.
 */

export interface TraceRequest {
  target: TraceTarget
  /** Only queues --queue names. */
  filter?: QueueFilter
  maxScan: number
  /** --since, Unix ms: copies taken before it are left out (and Kafka seeks past them). */
  since?: number
  /** Unix ms: the --timeout budget's end. */
  deadline: number
  acceptDeliveryCost: boolean
  stopRequested?: () => boolean
  /** Called as each place starts; the returned reporter hears how far it got (a TTY progress line). */
  onPlace?: (source: TraceSource) => PlaceReporter
}

export interface PlaceReporter {
  read(count: number): void
  done(): void
}

export interface UnreadPlace {
  queue: string
  state: string
  why: string
}

export interface CutShortPlace {
  queue: string
  state: string
  scanned: number
  why: 'max-scan' | 'timeout' | 'interrupted'
}

export interface BrokerTrace {
  sightings: Sighting[]
  /** Places read (a queue's list, its in-flight elements, bq's staging place count one each). */
  placesRead: number
  scanned: number
  unread: UnreadPlace[]
  cutShort: CutShortPlace[]
}

export async function traceBroker(adapter: BrokerAdapter, request: TraceRequest): Promise<BrokerTrace> {
  const trace: BrokerTrace = {sightings: [], placesRead: 0, scanned: 0, unread: [], cutShort: []}
  for (const source of await traceSources(adapter, request.filter)) {
    if (request.stopRequested?.()) {
      trace.cutShort.push({queue: source.queue, state: source.state, scanned: 0, why: 'interrupted'})
      continue
    }
    if (Date.now() > request.deadline) {
      trace.cutShort.push({queue: source.queue, state: source.state, scanned: 0, why: 'timeout'})
      continue
    }
    try {
      const cost = await readCost(adapter, source)
      if (!cost.free && !request.acceptDeliveryCost) {
        trace.unread.push({queue: source.queue, state: source.state, why: `${cost.why}; add --accept-delivery-cost to read it`})
        continue
      }
      const reporter = request.onPlace?.(source)
      try {
        const outcome = await scanSource(adapter, source, request.target, {maxScan: request.maxScan, since: request.since, deadline: request.deadline, stopRequested: request.stopRequested, onRead: (n) => reporter?.read(n)})
        trace.placesRead++
        trace.scanned += outcome.scanned
        trace.sightings.push(...outcome.sightings)
        if (outcome.cutShort !== undefined) trace.cutShort.push({queue: source.queue, state: source.state, scanned: outcome.scanned, why: outcome.cutShort})
        if (outcome.unseen !== undefined) trace.unread.push({queue: source.queue, state: source.state, why: outcome.unseen})
      } finally {
        reporter?.done()
      }
    } catch (error) {
      // Deleted between the listing and the read: nothing of it to find.
      if (error instanceof QueueNotFoundError) continue
      // A broker that cannot be reached or refuses the user fails the whole broker, not one place.
      if (error instanceof ConnectionError || error instanceof AuthError || !(error instanceof BqError)) throw error
      trace.unread.push({queue: source.queue, state: source.state, why: error.message})
    }
  }
  return trace
}
