import type {BrokerAdapter, BrokerMessage, BrowseFrom} from '../brokers/adapter.js'
import {viewOf} from './message-view.js'
import type {MessageView} from './message-view.js'
import {matchesAll} from './match.js'
import type {Selector} from './selector.js'

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
  /** Pushed down to the adapter: messages enqueued before this Unix ms may be skipped (BrowseOptions.notBefore); the selectors still decide. */
  notBefore?: number
  /** Start this many messages past the head (or past `from`): where a previous read ended (peek --follow). */
  offset?: number
  /** Checked between pages: stop reading (a signal), keeping what was read. */
  stopRequested?: () => boolean
}

export interface BrowseOutcome {
  views: MessageView[]
  scanned: number
  /** The scan stopped at scanLimit before the queue's end. */
  truncated: boolean
  /** stopRequested stopped the read part-way. */
  interrupted: boolean
}

const PAGE = 500

/**
 * `limit` may be Infinity (peek --all). With `onView` each matching message is handed over as it
 * is read (awaited, so a writer's back-pressure slows the read) instead of collected in `views`.
 */
export async function browseQueue(adapter: BrokerAdapter, request: BrowseRequest, onView?: (view: MessageView) => Promise<void> | void): Promise<BrowseOutcome> {
  const selectors = request.selectors ?? []
  // The scan cap exists for filters; an unfiltered read of N messages must return N.
  const scanLimit = selectors.length > 0 ? request.scanLimit : Math.max(request.scanLimit, request.limit)
  const views: MessageView[] = []
  let scanned = 0
  let truncated = false
  const keep = async (message: BrokerMessage): Promise<boolean> => {
    const view = viewOf(message, adapter.binding, {validate: request.validate})
    if (selectors.length > 0 && !matchesAll(view, selectors)) return false
    if (onView) await onView(view)
    else views.push(view)
    return true
  }
  let matched = 0
  if (!adapter.capabilities.truePeek) {
    // Browsing has a cost on this broker (redelivery flags): read once, as few as possible.
    // No limit (peek --all) is every message the broker hands over.
    const wanted = Math.min(selectors.length > 0 ? scanLimit : Math.min(request.limit, scanLimit), Number.MAX_SAFE_INTEGER)
    const page = await adapter.browse(request.queue, {limit: wanted, ...logOptions(request)})
    for (const message of page) {
      scanned++
      if ((await keep(message)) && ++matched >= request.limit) break
    }
    truncated = page.length >= wanted && matched < request.limit
    return {views, scanned, truncated, interrupted: false}
  }
  let interrupted = false
  while (matched < request.limit) {
    if (request.stopRequested) {
      // A broker that answers synchronously (the embedded store) never yields to the event loop,
      // where signals are delivered: yield between pages so a stop is seen.
      await new Promise((resolve) => setImmediate(resolve))
      if (request.stopRequested()) {
        interrupted = true
        break
      }
    }
    const size = Math.min(PAGE, scanLimit - scanned, selectors.length > 0 ? PAGE : request.limit - matched)
    if (size <= 0) {
      truncated = true
      break
    }
    const page = await adapter.browse(request.queue, {limit: size, offset: (request.offset ?? 0) + scanned, ...logOptions(request)})
    for (const message of page) {
      scanned++
      if ((await keep(message)) && ++matched >= request.limit) break
    }
    if (page.length < size) break
  }
  return {views, scanned, truncated, interrupted}
}

/** The position options a read passes on to the adapter's browse. */
function logOptions(request: BrowseRequest): {from?: BrowseFrom; notBefore?: number} {
  return {...(request.from ? {from: request.from} : {}), ...(request.notBefore === undefined ? {} : {notBefore: request.notBefore})}
}
