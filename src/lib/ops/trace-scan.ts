import type {BrokerAdapter, BrokerMessage, InflightElement} from '../brokers/adapter.js'
import {viewOf} from './message-view.js'
import type {MessageView} from './message-view.js'
import {matchOf} from './trace-id.js'
import type {MatchedBy, TraceTarget} from './trace-id.js'
import {browsePrefilter, couldMatch} from './trace-prefilter.js'
import type {TraceSource} from './trace-sources.js'

/**
 * Reads one place `bq trace` looks (a queue, its in-flight elements, bq's staging place) with
 * side-effect-free reads only, and keeps the messages that belong to the target. A body is
 * decoded only when its bytes could match (trace-prefilter.ts) or its native headers name the id.
 */

export interface Sighting {
  source: TraceSource
  view: MessageView
  matchedBy: MatchedBy
  /** Where the element waits when it is in flight (`processing`, `reserved`, `delayed`). */
  place?: string
}

export interface ScanLimits {
  /** Read at most this many messages of the place. */
  maxScan: number
  /** Unix ms: a copy the broker took (else one created) before this is left out; pushed down to brokers that seek by time. */
  since?: number
  /** Unix ms after which no further page is read. */
  deadline: number
  /** Checked between pages (a signal). */
  stopRequested?: () => boolean
  /** Messages read so far in this place, as they are read (a progress line). */
  onRead?: (read: number) => void
}

export interface ScanOutcome {
  sightings: Sighting[]
  /** Messages read. */
  scanned: number
  /** Why the place was not read to its end: `--max-scan`, `--timeout`, or a signal. */
  cutShort?: 'max-scan' | 'timeout' | 'interrupted'
  /** Messages the place holds that no read can show (in flight on a broker that shows counts only), and why. */
  unseen?: string
}

/**
 * Per broker, the in-flight gauge that counts messages a browse cannot see (held where no client
 * reads them). Pulsar's unacked and Service Bus's locked messages are not here: a reader or a peek
 * still sees them, waiting.
 */
const HIDDEN_FROM_BROWSE: Record<string, string> = {rabbitmq: 'unacked', sqs: 'not_visible', artemis: 'delivering'}

/** Messages per browse call: big pages keep the round trips few (Redis LRANGE, the store's SELECT). */
export const TRACE_PAGE = 1000

export async function scanSource(adapter: BrokerAdapter, source: TraceSource, target: TraceTarget, limits: ScanLimits): Promise<ScanOutcome> {
  const sightings: Sighting[] = []
  const look = (message: BrokerMessage, place?: string) => {
    const native = message.native
    // A poison body may still carry the ids in its headers (the binding's projection).
    if (!couldMatch(message.body, target) && matchOf(target, native.traceId, native.id) === undefined) return
    const view = viewOf(message, adapter.binding)
    const matchedBy = matchOf(target, view.traceId, view.id)
    const at = message.enqueuedAt ?? view.createdAt
    if (limits.since !== undefined && (at === undefined || at < limits.since)) return
    if (matchedBy !== undefined) sightings.push({source, view, matchedBy, ...(place === undefined ? {} : {place})})
  }
  if (source.read === 'inflight') {
    const report = await adapter.inflight!(source.queue, {limit: limits.maxScan})
    const elements: InflightElement[] = report.elements ?? []
    for (const element of elements) look(element, element.place)
    limits.onRead?.(elements.length)
    const count = (names: Set<string>) => report.gauges.filter((g) => names.has(g.name)).reduce((sum, g) => sum + g.value, 0)
    const held = count(new Set(['processing', 'reserved', 'delayed']))
    const hidden = HIDDEN_FROM_BROWSE[adapter.kind]
    const unseen = report.countsOnly === undefined || hidden === undefined ? 0 : count(new Set([hidden]))
    return {
      sightings,
      scanned: elements.length,
      ...(elements.length >= limits.maxScan && held > elements.length ? {cutShort: 'max-scan' as const} : {}),
      ...(unseen > 0 ? {unseen: `${unseen} message(s) in flight that ${adapter.kind} shows as counts only: ${report.countsOnly}`} : {}),
    }
  }
  if (source.read === 'staged') {
    const staged = await adapter.staged!(source.queue, limits.maxScan + 1)
    const read = staged.slice(0, limits.maxScan)
    for (const message of read) look(message)
    limits.onRead?.(read.length)
    return {sightings, scanned: read.length, ...(staged.length > limits.maxScan ? {cutShort: 'max-scan' as const} : {})}
  }
  // A log broker (Kafka) keeps records after they are consumed: the whole retained log is read.
  // The prefilter lets an adapter hand back messages `look` would drop as counted stand-ins.
  const from = {...(adapter.capabilities.logBrowse ? {from: {kind: 'beginning' as const}} : {}), ...(limits.since === undefined ? {} : {notBefore: limits.since}), prefilter: browsePrefilter(target)}
  if (!adapter.capabilities.truePeek) {
    // Each read costs a delivery here (the caller has the operator's consent): read once.
    const page = await adapter.browse(source.queue, {limit: limits.maxScan + 1, ...from})
    const read = page.slice(0, limits.maxScan)
    for (const message of read) look(message)
    limits.onRead?.(read.length)
    return {sightings, scanned: read.length, ...(page.length > limits.maxScan ? {cutShort: 'max-scan' as const} : {})}
  }
  // Where browse calls are independent (Redis), the next page is asked for while this one is looked at.
  const readAhead = adapter.capabilities.parallelBrowse === true
  const fetch = (offset: number) => adapter.browse(source.queue, {limit: Math.min(TRACE_PAGE, limits.maxScan - offset), offset, ...from})
  let scanned = 0
  let pending: Promise<BrokerMessage[]> | undefined
  for (;;) {
    if (scanned >= limits.maxScan) {
      // One more message past the cap says whether the cap cut anything off.
      const more = await adapter.browse(source.queue, {limit: 1, offset: scanned, ...from})
      return {sightings, scanned, ...(more.length > 0 ? {cutShort: 'max-scan' as const} : {})}
    }
    if (Date.now() > limits.deadline) return {sightings, scanned, cutShort: 'timeout'}
    if (limits.stopRequested !== undefined) {
      // The embedded store answers synchronously: yield so a signal is seen between pages.
      await new Promise((resolve) => setImmediate(resolve))
      if (limits.stopRequested()) return {sightings, scanned, cutShort: 'interrupted'}
    }
    const size = Math.min(TRACE_PAGE, limits.maxScan - scanned)
    const page = await (pending ?? fetch(scanned))
    pending = undefined
    scanned += page.length
    if (readAhead && page.length === size && scanned < limits.maxScan) {
      pending = fetch(scanned)
      // A scan that stops before awaiting it (a limit, a signal) must not leave an unhandled rejection.
      pending.catch(() => undefined)
    }
    for (const message of page) look(message)
    limits.onRead?.(scanned)
    if (page.length < size) return {sightings, scanned}
  }
}
