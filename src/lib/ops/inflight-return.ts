import {createHash} from 'node:crypto'

import type {BrokerAdapter, InflightElement} from '../brokers/adapter.js'
import {UsageError} from '../errors.js'
import {formatAge} from '../output/table.js'
import {failedRun} from './failed-run.js'
import {matchesAll} from './match.js'
import {viewOf} from './message-view.js'
import type {MessageView} from './message-view.js'
import {aboutOf} from './plan-batch.js'
import type {About, RedriveCounts, RedriveItem, RedriveOutcome, RedriveReport} from './redrive-types.js'
import type {Selector} from './selector.js'

/**
 * `bq inflight return`: moves work its consumers took and never finished back to the head of its
 * queue, on brokers where only an operator does that (BrokerAdapter.returnInflight). The broker
 * moves each element only while it is still where it was found, so what a consumer acknowledged
 * meanwhile is reported and never pushed back; bytes (attempts included) stay as they are.
 * Runs on the redrive engine's report and outcomes (`redriven` = returned), so the CLI's run
 * machinery (move-run.ts, the ledger) serves it unchanged.
 */

/** Elements read (and moved) per page. */
const PAGE = 500

export interface InflightReturnRequest {
  adapter: BrokerAdapter
  queue: string
  selectors: Selector[]
  /** --older-than in ms: only elements at least this old (see `isOldEnough`). */
  olderThanMs?: number
  dryRun: boolean
  now?: () => number
  onItem?: (item: RedriveItem) => void
  stopRequested?: () => boolean
}

export type InflightReturnReport = RedriveReport & {
  /** Elements selected that their consumer acknowledged before bq could move them: left alone. */
  acknowledged_meanwhile: number
}

/**
 * Whether an element counts as stuck for --older-than: a Laravel reservation whose expiry has
 * passed (Laravel itself then treats the job as abandoned), or any element whose meta.created_at
 * is at least that long ago. The processing list keeps no time of taking, so created_at is the
 * only clock: an upper bound of the time in flight (a message that waited long in the queue counts old).
 */
export function isOldEnough(element: InflightElement, view: MessageView, olderThanMs: number, now: number): boolean {
  if (element.expiresAt !== undefined && element.expiresAt <= now) return true
  return view.createdAt !== undefined && now - view.createdAt >= olderThanMs
}

/** Refuses, in one line, a broker where bq returns nothing: saying how that broker returns work itself where it says. */
export async function checkReturnable(adapter: BrokerAdapter, queue: string): Promise<void> {
  if (adapter.returnInflight !== undefined && adapter.returnableInflight !== undefined) return
  const itself = (await adapter.inflight?.(queue, {limit: 0}))?.returnsItself
  if (itself !== undefined) throw new UsageError(`${itself.replace(/\.$/, '')}: bq inflight return moves nothing on ${adapter.kind}; nothing was changed`, 'unsupported')
  throw new UsageError(`bq inflight return is not available for ${adapter.kind}; nothing was changed`, 'unsupported')
}

export async function returnInflight(request: InflightReturnRequest): Promise<InflightReturnReport> {
  const {adapter, queue} = request
  await checkReturnable(adapter, queue)
  const readPage = adapter.returnableInflight!.bind(adapter)
  const moveBack = adapter.returnInflight!.bind(adapter)
  const now = request.now ?? Date.now
  const counts: RedriveCounts = {examined: 0, redriven: 0, would_redrive: 0, skipped: 0, poison: 0, failed: 0}
  const report: InflightReturnReport = {dlq: queue, source: adapter.displayUrl, target: adapter.displayUrl, dry_run: request.dryRun, counts, stopped_early: false, acknowledged_meanwhile: 0}
  const emit = (about: About, outcome: RedriveOutcome, error?: string) => {
    counts[outcome] = (counts[outcome] ?? 0) + 1
    const item: RedriveItem = {id: about.id, trace_id: about.trace_id, urn: about.urn, reason: about.reason, target: outcome === 'skipped' || outcome === 'poison' ? null : queue, outcome}
    if (error !== undefined) item.error = error
    request.onItem?.(item)
  }
  // A consumer's ack shifts the positions below it by one, so a page can show again an element
  // the previous page showed: each is examined once (by its exact bytes and place).
  const seen = new Set<string>()
  let before: number | undefined
  try {
    do {
      await new Promise((resolve) => setImmediate(resolve))
      if (request.stopRequested?.()) {
        report.stopped_early = true
        report.stop_reason = 'interrupted'
        break
      }
      const page = await readPage(queue, {before, limit: PAGE})
      const chosen: Array<{element: InflightElement; about: About}> = []
      for (const element of page.elements) {
        const digest = createHash('sha1').update(element.place).update('\0').update(element.stored ?? element.body).digest('hex')
        if (seen.has(digest)) continue
        seen.add(digest)
        counts.examined++
        const view = viewOf(element, adapter.binding)
        const about = aboutOf(view)
        if (view.decodeError) emit(about, 'poison', view.decodeError)
        else if (request.olderThanMs !== undefined && !isOldEnough(element, view, request.olderThanMs, now())) emit(about, 'skipped', tooYoung(view, request.olderThanMs, now()))
        else if (!matchesAll(view, request.selectors)) emit(about, 'skipped')
        else if (request.dryRun) emit(about, 'would_redrive')
        else chosen.push({element, about})
      }
      if (chosen.length > 0) {
        const moved = await moveBack(queue, chosen.map((c) => c.element))
        chosen.forEach(({about}, i) => {
          if (moved[i]) return emit(about, 'redriven')
          report.acknowledged_meanwhile++
          emit(about, 'skipped', 'acknowledged by its consumer meanwhile: not returned')
        })
      }
      before = page.next
    } while (before !== undefined)
  } catch (error) {
    throw failedRun(error, report)
  }
  return report
}

function tooYoung(view: MessageView, olderThanMs: number, now: number): string {
  if (view.createdAt === undefined) return 'no meta.created_at to tell its age'
  return `created ${formatAge(now - view.createdAt)} ago, not ${formatAge(olderThanMs)}`
}
