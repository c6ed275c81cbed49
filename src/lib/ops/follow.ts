import type {BrokerAdapter} from '../brokers/adapter.js'
import {UsageError} from '../errors.js'
import {browseQueue} from './browse.js'
import type {BrowseRequest} from './browse.js'
import type {MessageView} from './message-view.js'

/**
 * `bq peek --follow`: reads what is waiting, then polls for what arrives after it, without
 * consuming anything, until stopRequested. Each poll browses from the position the last one
 * ended at, so only brokers with a true peek can follow: elsewhere a read is a delivery or a
 * receive, and a message read once would come back again and again.
 *
 * Positions are counted from the queue's head. When a consumer takes messages meanwhile, the
 * queue gets shorter than the position reached: following goes on from the new end, and
 * messages that arrived in between may be missed (follow suits a queue nobody drains, a DLQ).
 */
export interface FollowOutcome {
  /** Messages looked at (matching or not). */
  scanned: number
}

export const FOLLOW_INTERVAL_MS = 500

export function refuseFollow(adapter: BrokerAdapter): void {
  if (adapter.capabilities.truePeek) return
  throw new UsageError(`${adapter.kind} has no true peek (a read there is a delivery or a receive), so --follow cannot watch it without taking the same messages again and again; use bq peek without --follow`)
}

export async function followQueue(
  adapter: BrokerAdapter,
  request: Omit<BrowseRequest, 'limit' | 'scanLimit' | 'offset'> & {stopRequested: () => boolean},
  onView: (view: MessageView) => Promise<void> | void,
  afterPoll: () => Promise<void>,
  intervalMs = FOLLOW_INTERVAL_MS,
): Promise<FollowOutcome> {
  let position = 0
  let scanned = 0
  while (!request.stopRequested()) {
    const outcome = await browseQueue(adapter, {...request, limit: Number.POSITIVE_INFINITY, scanLimit: Number.POSITIVE_INFINITY, offset: position}, onView)
    position += outcome.scanned
    scanned += outcome.scanned
    await afterPoll()
    if (outcome.interrupted) break
    await pause(intervalMs, request.stopRequested)
    // A queue drained by a consumer meanwhile: go on from its new end (log reads keep their positions).
    if (request.from === undefined && outcome.scanned === 0) {
      const depth = await adapter.count(request.queue)
      if (depth < position) position = depth
    }
  }
  return {scanned}
}

/** Waits `ms`, checking for a stop every 50 ms so Ctrl-C ends the wait at once. */
async function pause(ms: number, stopRequested: () => boolean): Promise<void> {
  const until = Date.now() + ms
  while (Date.now() < until && !stopRequested()) await new Promise((resolve) => setTimeout(resolve, Math.min(50, until - Date.now())))
}
