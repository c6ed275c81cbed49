/**
 * The watch of a canary stage: for a while after a stage moved its messages, reads the DLQ and
 * finds those that came back (the same meta.id, with a dead_letter block other than the one it had
 * when it was moved: a consumer failed it again). Reading is planOnly's: a browse on brokers with a
 * true peek (nothing is taken, nothing is counted); elsewhere every message is taken and handed
 * back, so the DLQ is read once, at the end of the window (and that read costs a delivery each
 * where the queue counts them: the command refuses it unless the operator accepted that).
 */
import type {BrokerAdapter} from '../brokers/adapter.js'
import {viewOf} from './message-view.js'
import type {MessageView} from './message-view.js'
import {planOnly} from './redrive.js'

export interface WatchRequest {
  source: BrokerAdapter
  dlq: string
  /** The stage's moved ids, each with the dead_letter.failed_at it had when moved. */
  moved: Map<string, number | undefined>
  /** How long to watch, in milliseconds. */
  windowMs: number
  /** Stop watching as soon as this many have come back (the stage aborts anyway). */
  enough: number
  stopRequested: () => boolean
  /** After each read and once a second: how many came back so far and the milliseconds left. */
  onTick?: (returned: number, leftMs: number) => void
}

export interface WatchOutcome {
  /** The returned messages as they are now on the DLQ (one per id). */
  returned: MessageView[]
  /** A signal stopped the watch before its window ended. */
  interrupted: boolean
  watchedMs: number
}

/** Between two reads of a DLQ with a true peek. */
const POLL_MS = {min: 250, max: 2000}

export async function watchReturns(request: WatchRequest): Promise<WatchOutcome> {
  const started = Date.now()
  const deadline = started + request.windowMs
  const returned = new Map<string, MessageView>()
  const free = request.source.capabilities.truePeek
  const poll = Math.min(POLL_MS.max, Math.max(POLL_MS.min, request.windowMs / 10))
  const read = async () => {
    await planOnly({source: request.source, dlq: request.dlq, max: 0, stopRequested: request.stopRequested}, (message) => {
      const view = viewOf(message, request.source.binding)
      if (view.id === undefined || !request.moved.has(view.id) || returned.has(view.id)) return
      // Where a log keeps what was moved (Kafka), the message as it was moved is no return.
      if (view.deadLetter !== undefined && view.deadLetter.failedAt === request.moved.get(view.id)) return
      returned.set(view.id, view)
    })
  }
  const tick = () => request.onTick?.(returned.size, Math.max(0, deadline - Date.now()))
  tick()
  while (true) {
    const left = deadline - Date.now()
    if (request.stopRequested()) return {returned: [...returned.values()], interrupted: true, watchedMs: Date.now() - started}
    // A read that costs deliveries happens once, when the window has passed.
    if (free || left <= 0) {
      await read()
      tick()
    }
    if (left <= 0 || returned.size >= request.enough) break
    await pause(Math.min(free ? poll : left, Math.max(0, deadline - Date.now())), request.stopRequested, tick)
  }
  return {returned: [...returned.values()], interrupted: false, watchedMs: Date.now() - started}
}

/** Waits up to `ms`, waking for a stop request and ticking once a second. */
async function pause(ms: number, stopRequested: () => boolean, tick: () => void): Promise<void> {
  const until = Date.now() + ms
  let nextTick = Date.now() + 1000
  while (Date.now() < until && !stopRequested()) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(100, until - Date.now())))
    if (Date.now() >= nextTick) {
      tick()
      nextTick += 1000
    }
  }
}
