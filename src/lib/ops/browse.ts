import type {BrokerAdapter, BrokerMessage, BrowseFrom} from '../brokers/adapter.js'
import {viewOf} from './message-view.js'
import type {MessageView} from './message-view.js'
import {matchesAll} from './match.js'
import type {Selector} from './match.js'

/**
 * Non-destructive reading shared by peek and dlq inspect: pages through a queue with the
 * adapter's browse, decoding each body, keeping the ones the selectors match.
 */
export interface BrowseRequest {
  queue: string
  /** Stop after this many matching messages. */
  limit: number
  selectors?: Selector[]
  /** With selectors, look at no more than this many messages in all (filters can otherwise scan forever). Without, `limit` alone bounds the read. */
  scanLimit: number
  validate?: boolean
  /** Read a log broker from this position instead of the queue's head (capabilities.logBrowse). */
  from?: BrowseFrom
}

export interface BrowseOutcome {
  views: MessageView[]
  scanned: number
  /** The scan stopped at scanLimit before the queue's end. */
  truncated: boolean
}

const PAGE = 500

export async function browseQueue(adapter: BrokerAdapter, request: BrowseRequest, onView?: (view: MessageView) => void): Promise<BrowseOutcome> {
  const selectors = request.selectors ?? []
  // The scan cap exists for filters; an unfiltered read of N messages must return N.
  const scanLimit = selectors.length > 0 ? request.scanLimit : Math.max(request.scanLimit, request.limit)
  const views: MessageView[] = []
  let scanned = 0
  let truncated = false
  const keep = (message: BrokerMessage): boolean => {
    const view = viewOf(message, adapter.binding, {validate: request.validate})
    if (selectors.length > 0 && !matchesAll(view, selectors)) return false
    if (onView) onView(view)
    else views.push(view)
    return true
  }
  let matched = 0
  if (!adapter.capabilities.truePeek) {
    // Browsing has a cost on this broker (redelivery flags): read once, as few as possible.
    const wanted = selectors.length > 0 ? scanLimit : Math.min(request.limit, scanLimit)
    const page = await adapter.browse(request.queue, {limit: wanted, ...(request.from ? {from: request.from} : {})})
    for (const message of page) {
      scanned++
      if (keep(message) && ++matched >= request.limit) break
    }
    truncated = page.length >= wanted && matched < request.limit
    return {views, scanned, truncated}
  }
  while (matched < request.limit) {
    const size = Math.min(PAGE, scanLimit - scanned, selectors.length > 0 ? PAGE : request.limit - matched)
    if (size <= 0) {
      truncated = true
      break
    }
    const page = await adapter.browse(request.queue, {limit: size, offset: scanned, ...(request.from ? {from: request.from} : {})})
    for (const message of page) {
      scanned++
      if (keep(message) && ++matched >= request.limit) break
    }
    if (page.length < size) break
  }
  return {views, scanned, truncated}
}
