import type {BrokerAdapter, DrainSession, OutgoingMessage, ReservedMessage} from '../brokers/adapter.js'
import {fieldsOf, resetForRedriveBytes} from '../envelope/envelope.js'
import {describeError} from '../errors.js'
import {matchesAll} from './match.js'
import type {Selector} from './match.js'
import {viewOf} from './message-view.js'
import type {MessageView} from './message-view.js'
import {RateLimiter} from './rate.js'

/**
 * The redrive engine (DESIGN.md, "the rules bq keeps"):
 * 1. a message leaves the DLQ only after the target durably accepted its copy (or both happen
 *    in one broker transaction);
 * 2. the copy is the original with `dead_letter` removed and `attempts` 0, every other byte kept;
 * 3. dry runs, unselected and poison messages stay on the DLQ, in place where the broker allows;
 * 4. the DLQ is streamed batch by batch;
 * 5. every message gets an outcome, and the run reports them.
 */

export type RedriveOutcome = 'redriven' | 'would_redrive' | 'skipped' | 'poison' | 'failed'

export interface RedriveItem {
  id: string | null
  trace_id: string | null
  urn: string | null
  reason: string | null
  target: string | null
  outcome: RedriveOutcome
  error?: string
}

export interface RedriveCounts {
  examined: number
  redriven: number
  would_redrive: number
  skipped: number
  poison: number
  failed: number
}

export interface RedriveRequest {
  source: BrokerAdapter
  dlq: string
  /** Where copies go; the source broker when absent. */
  target?: BrokerAdapter
  /** Sandbox routing: every copy to this queue instead of its original one. */
  toQueue?: string
  selectors: Selector[]
  /** 0 = every message present at the start. */
  max: number
  /** Messages per second. */
  rate?: number
  bypass: boolean
  dryRun: boolean
  batchSize?: number
  /** Called for every message as its outcome is decided (for --json items and progress). */
  onItem?: (item: RedriveItem) => void
  /** Set to stop after the current batch (SIGINT). */
  stopRequested?: () => boolean
}

export interface RedriveReport {
  dlq: string
  source: string
  target: string
  dry_run: boolean
  counts: RedriveCounts
  /** The run stopped early (interrupted, or the target failed). */
  stopped_early: boolean
  stop_reason?: string
}

const DEFAULT_BATCH = 500

/** What an item reports about its message. */
type About = Pick<RedriveItem, 'id' | 'trace_id' | 'urn' | 'reason'>

function aboutOf(view: MessageView): About {
  return {id: view.id ?? null, trace_id: view.traceId ?? null, urn: view.urn ?? null, reason: view.deadLetter?.reason ?? null}
}

export async function redrive(request: RedriveRequest): Promise<RedriveReport> {
  const target = request.target ?? request.source
  const counts: RedriveCounts = {examined: 0, redriven: 0, would_redrive: 0, skipped: 0, poison: 0, failed: 0}
  const report: RedriveReport = {dlq: request.dlq, source: request.source.displayUrl, target: target.displayUrl, dry_run: request.dryRun, counts, stopped_early: false}
  const emit = (about: About, outcome: RedriveOutcome, targetQueue: string | null, error?: string) => {
    counts[outcome]++
    if (request.onItem === undefined) return
    const item: RedriveItem = {id: about.id, trace_id: about.trace_id, urn: about.urn, reason: about.reason, target: targetQueue, outcome}
    if (error !== undefined) item.error = error
    request.onItem(item)
  }
  const planTarget = (view: MessageView): string | undefined => request.toQueue ?? view.deadLetter?.originalQueue ?? view.queue

  if (request.dryRun) {
    await planOnly(request, (view) => {
      counts.examined++
      if (view.decodeError) emit(aboutOf(view), 'poison', null, view.decodeError)
      else if (!matchesAll(view, request.selectors)) emit(aboutOf(view), 'skipped', null)
      else {
        const queue = planTarget(view)
        if (queue === undefined) emit(aboutOf(view), 'failed', null, 'no original queue recorded: use --to')
        else emit(aboutOf(view), 'would_redrive', queue)
      }
    })
    return report
  }

  const limiter = request.rate ? new RateLimiter(request.rate) : undefined
  const batchSize = Math.max(1, Math.min(request.batchSize ?? DEFAULT_BATCH, request.rate ?? Infinity))
  const session = await request.source.drain(request.dlq, {max: request.max})
  const sameBroker = target === request.source
  // Where the source allows it, a batch's moves run while the next batch is decoded and planned.
  const overlap = session.nextWhileSettling === true
  /** The previous batch's moves, still running (overlap only); never rejects, see `moveFailure`. */
  let moving: Promise<void> | undefined
  let moveFailure: {error: unknown} | undefined
  const settle = async () => {
    if (moving !== undefined) await moving
    moving = undefined
    if (moveFailure !== undefined) throw moveFailure.error
  }

  /** Decodes, selects and resets a batch; changes nothing and reports nothing yet. */
  const plan = (batch: ReservedMessage[]) => {
    const kept: Array<{message: ReservedMessage; about: About; outcome: RedriveOutcome; error?: string}> = []
    const groups = new Map<string, Group>()
    for (const message of batch) {
      const view = viewOf(message, request.source.binding)
      if (!view.envelope) {
        kept.push({message, about: aboutOf(view), outcome: 'poison', error: view.decodeError})
        continue
      }
      if (!matchesAll(view, request.selectors)) {
        kept.push({message, about: aboutOf(view), outcome: 'skipped'})
        continue
      }
      const queue = planTarget(view)
      if (queue === undefined) {
        kept.push({message, about: aboutOf(view), outcome: 'failed', error: 'no original queue recorded: use --to'})
        continue
      }
      const body = resetForRedriveBytes(view.envelope)
      // The reset copy differs only in attempts, so its projection needs no second parse.
      const fields = fieldsOf(view.envelope)
      fields.attempts = 0
      const group = groups.get(queue) ?? []
      // Only what the report needs is kept until the move: the view and its tree die young.
      group.push({message, about: aboutOf(view), outgoing: {body, fields, bypass: request.bypass, republish: true}})
      groups.set(queue, group)
    }
    return {kept, groups}
  }

  const moveAll = async (groups: Map<string, Group>) => {
    for (const [queue, group] of groups) {
      await limiter?.take(group.length)
      try {
        await moveGroup(session, target, sameBroker, queue, group)
        for (const entry of group) emit(entry.about, 'redriven', queue)
      } catch (error) {
        // The copies were not confirmed: the originals stay on the DLQ.
        await session.release(group.map((entry) => entry.message))
        const reason = describeError(error)
        for (const entry of group) emit(entry.about, 'failed', queue, reason)
        report.stopped_early = true
        report.stop_reason = `publishing to ${queue} failed: ${reason}`
      }
    }
  }

  try {
    while (true) {
      if (request.stopRequested?.()) {
        await settle()
        if (!report.stopped_early) {
          report.stopped_early = true
          report.stop_reason = 'interrupted'
        }
        break
      }
      const batch = await session.next(batchSize)
      if (batch.length === 0) break
      const {kept, groups} = plan(batch)
      await settle()
      // The previous batch's target failed (overlap only): this batch was not examined; close returns it.
      if (report.stopped_early) break
      counts.examined += batch.length
      for (const entry of kept) emit(entry.about, entry.outcome, null, entry.error)
      if (kept.length > 0) await session.release(kept.map((entry) => entry.message))
      if (overlap) {
        moving = moveAll(groups).catch((error: unknown) => {
          moveFailure = {error}
        })
        continue
      }
      await moveAll(groups)
      if (report.stopped_early) break
    }
    await settle()
  } finally {
    // Moves still running when the loop failed finish (and report) before the session closes.
    await moving
    await session.close()
  }
  return report
}

type Group = Array<{message: ReservedMessage; about: About; outgoing: OutgoingMessage}>

async function moveGroup(
  session: DrainSession,
  target: BrokerAdapter,
  sameBroker: boolean,
  queue: string,
  group: Array<{message: ReservedMessage; outgoing: OutgoingMessage}>,
): Promise<void> {
  const sources = group.map((entry) => entry.message)
  const outgoing = group.map((entry) => entry.outgoing)
  if (sameBroker && session.moveAtomically && target.capabilities.atomicMove) {
    await session.moveAtomically(sources, queue, outgoing)
    return
  }
  // Publish with confirmation first; only then remove the originals (at-least-once across brokers).
  await target.publish(queue, outgoing)
  await session.ack(sources)
}

/**
 * A dry run changes nothing: on brokers with a true peek it pages through with browse; on the
 * others it drains and releases everything, which the broker returns to place on close.
 */
async function planOnly(request: RedriveRequest, visit: (view: MessageView) => void): Promise<void> {
  const {source, dlq} = request
  const limit = request.max > 0 ? request.max : Infinity
  let seen = 0
  if (source.capabilities.truePeek) {
    const total = request.max > 0 ? request.max : await source.count(dlq)
    while (seen < total) {
      const page = await source.browse(dlq, {offset: seen, limit: Math.min(DEFAULT_BATCH, total - seen)})
      for (const message of page) visit(viewOf(message, source.binding))
      seen += page.length
      if (page.length === 0) break
    }
    return
  }
  const session = await source.drain(dlq, {max: request.max})
  try {
    while (seen < limit) {
      const batch = await session.next(DEFAULT_BATCH)
      if (batch.length === 0) break
      for (const message of batch) visit(viewOf(message, source.binding))
      seen += batch.length
      await session.release(batch)
    }
  } finally {
    await session.close()
  }
}
