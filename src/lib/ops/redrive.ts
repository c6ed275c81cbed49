import type {BrokerAdapter, BrokerMessage, DrainSession, OutgoingMessage, ReservedMessage} from '../brokers/adapter.js'
import {resetForRedrive} from '../envelope/envelope.js'
import type {Envelope} from '../envelope/envelope.js'
import {BqError, ExitCode, UsageError, describeError, refusalOf} from '../errors.js'
import {BatchSizer, DEFAULT_BATCH, tooLarge} from './batch-sizer.js'
import {copyMessages} from './copy.js'
import {failedRun} from './failed-run.js'
import {aboutOf, aboutUndecoded, intoItself, planBatch} from './plan-batch.js'
import type {Group, PlanRules} from './plan-batch.js'
import {matchesAll} from './match.js'
import {viewOf} from './message-view.js'
import type {MessageView} from './message-view.js'
import {RateLimiter} from './rate.js'
import type {About, EnvelopeTransform, RedriveCounts, RedriveItem, RedriveOutcome, RedriveReport, RedriveRequest} from './redrive-types.js'

/**
 * The redrive engine (DESIGN.md, "the rules bq keeps"):
 * 1. a message leaves the DLQ only after the target durably accepted its copy (or both happen
 *    in one broker transaction);
 * 2. the copy is the original with `dead_letter` removed and `attempts` 0, every other byte kept;
 * 3. dry runs, unselected and poison messages stay on the DLQ, in place where the broker allows;
 * 4. the DLQ is streamed batch by batch;
 * 5. every message gets an outcome, and the run reports them.
 */

/**
 * True when copies go to the broker the DLQ is on: the same adapter, or one opened on the same
 * (redacted) URL with --to-broker.
 */
function sameBrokerAs(source: BrokerAdapter, target: BrokerAdapter): boolean {
  return target === source || (target.kind === source.kind && target.displayUrl === source.displayUrl)
}

/** How many would-be copies a dry run with a transform shows whole. */
export const TRANSFORM_SAMPLE = 3

export async function redrive(request: RedriveRequest): Promise<RedriveReport> {
  const target = request.target ?? request.source
  const counts: RedriveCounts = {examined: 0, redriven: 0, would_redrive: 0, skipped: 0, poison: 0, failed: 0}
  const report: RedriveReport = {dlq: request.dlq, source: request.source.displayUrl, target: target.displayUrl, dry_run: request.dryRun, counts, stopped_early: false}
  const emit = (about: About, outcome: RedriveOutcome, targetQueue: string | null, error?: string, envelope?: string) => {
    counts[outcome] = (counts[outcome] ?? 0) + 1
    if (request.onItem === undefined) return
    const item: RedriveItem = {id: about.id, trace_id: about.trace_id, urn: about.urn, reason: about.reason, target: targetQueue, outcome}
    if (error !== undefined) item.error = error
    if (envelope !== undefined) item.envelope = envelope
    request.onItem(item)
  }
  const planTarget = (view: MessageView): string | undefined => request.toQueue ?? view.deadLetter?.originalQueue ?? view.queue
  /** A selected message's envelope after the transform (if any), and where it goes. */
  const transformed = (view: MessageView): {envelope: Envelope; queue: string | undefined} | {error: string} => {
    const envelope = view.envelope as Envelope
    if (request.transform === undefined) return {envelope, queue: planTarget(view)}
    let changed: ReturnType<EnvelopeTransform>
    try {
      changed = request.transform(envelope)
    } catch (error) {
      // A transform that breaks on one message (a patch on data nested too deep to convert) leaves that message alone.
      return {error: `could not be changed: ${describeError(error)}`}
    }
    if ('error' in changed) return changed
    const after = changed.envelope
    // dead_letter is the reset's, never the transform's: only meta.queue may have changed.
    return {envelope: after, queue: request.toQueue ?? view.deadLetter?.originalQueue ?? after.queue}
  }
  const sameBroker = sameBrokerAs(request.source, target)
  // Moving a DLQ into itself on its own broker only strips dead_letter blocks: never.
  if (sameBroker && request.toQueue === request.dlq) {
    throw new UsageError(`--to ${request.toQueue} is the dead-letter queue being redriven (on ${request.source.displayUrl}): choose another queue; nothing was changed`)
  }
  const intoSource = (queue: string) => sameBroker && queue === request.dlq
  await checkDeliveryCost(request)
  // A run that can hold messages back counts each kind, zero included, so its report names them.
  for (const outcome of request.holdOutcomes ?? []) counts[outcome] ??= 0
  /** Emits a held-back message's outcome; true when the hold rule kept it. */
  const holds = (view: MessageView): boolean => {
    const held = request.hold?.(view)
    if (held === undefined) return false
    emit(aboutOf(view), held.outcome, null, held.error)
    return true
  }

  if (request.dryRun) {
    try {
      const stopped = await planOnly(request, (message) => {
        counts.examined++
        const large = tooLarge(message)
        if (large !== undefined) return emit(aboutUndecoded(message), 'failed', null, large)
        const view = viewOf(message, request.source.binding)
        if (view.decodeError) emit(aboutOf(view), 'poison', null, view.decodeError)
        else if (!matchesAll(view, request.selectors)) emit(aboutOf(view), 'skipped', null)
        else if (holds(view)) return
        else {
          const changed = transformed(view)
          if ('error' in changed) return emit(aboutOf(view), 'failed', null, changed.error)
          const queue = changed.queue
          if (queue === undefined) emit(aboutOf(view), 'failed', null, 'no original queue recorded: use --to')
          else if (intoSource(queue)) emit(aboutOf(view), 'failed', queue, intoItself(queue))
          else if (request.transform !== undefined && counts.would_redrive < TRANSFORM_SAMPLE) emit(aboutOf(view), 'would_redrive', queue, undefined, resetForRedrive(changed.envelope).text)
          else emit(aboutOf(view), 'would_redrive', queue)
        }
      })
      if (stopped) stoppedOnRequest(report)
    } catch (error) {
      throw failedRun(error, report)
    }
    return report
  }

  const rules: PlanRules = {binding: request.source.binding, selectors: request.selectors, bypass: request.bypass, change: transformed, intoSource, runId: request.runId, hold: request.hold}
  // A copy publishes the same reset copies and takes nothing from the DLQ.
  if (request.copy) return copyMessages(request, target, rules, emit, report)

  const limiter = request.rate ? new RateLimiter(request.rate) : undefined
  const cap = Math.max(1, Math.min(request.batchSize ?? DEFAULT_BATCH, request.rate ?? Infinity))
  // Batches start small and grow while they fit the byte budget; a batch size the caller fixed starts at once.
  const sizer = new BatchSizer(cap, request.batchSize === undefined ? 1 : cap)
  const session = await request.source.drain(request.dlq, {max: request.max})
  let failure: {error: unknown} | undefined
  // Where the source allows it, a batch's moves run while the next batch is decoded and planned.
  const overlap = session.nextWhileSettling === true
  /** The previous batch's moves, still running (overlap only); never rejects, see `moveFailure`. */
  let moving: Promise<void> | undefined
  let moveFailure: {error: unknown} | undefined
  /** Messages chosen to move so far (a canary stage stops at its moveLimit). */
  let planned = 0
  const settle = async () => {
    if (moving !== undefined) await moving
    moving = undefined
    if (moveFailure !== undefined) throw moveFailure.error
  }

  /** Decodes, selects and resets a batch; changes nothing and reports nothing yet. */
  const plan = (batch: ReservedMessage[]) => planBatch(batch, rules)

  const moveAll = async (groups: Map<string, Group>) => {
    for (const [queue, group] of groups) {
      await limiter?.take(group.length)
      const step = {published: false, possiblyTwice: 0}
      try {
        await moveGroup(session, target, target === request.source, queue, group, step)
        for (const entry of group) emit(entry.about, 'redriven', queue)
        if (step.possiblyTwice > 0) report.possible_duplicates = (report.possible_duplicates ?? 0) + step.possiblyTwice
      } catch (error) {
        const reason = describeError(error)
        // A broker that is gone (exit 4) ends the run, with this report.
        const lost = error instanceof BqError && error.exitCode === ExitCode.connection
        report.stopped_early = true
        if (step.published) {
          // The target confirmed the copies but the originals could not be removed: they stay on
          // the DLQ (at least once), and the session cannot go on.
          for (const entry of group) emit(entry.about, 'failed', queue, `copied to ${queue}, but removing the original from the DLQ failed (${reason}): it may now be in both`)
          report.possible_duplicates = (report.possible_duplicates ?? 0) + group.length
          report.stop_reason = `removing messages copied to ${queue} from ${request.dlq} failed: ${reason}`
          throw error
        }
        // The copies were not confirmed: the originals stay on the DLQ (the broker returns them if the session is gone too).
        let releaseFailure: {error: unknown} | undefined
        try {
          await session.release(group.map((entry) => entry.message))
        } catch (failure) {
          releaseFailure = {error: failure}
        }
        for (const entry of group) emit(entry.about, 'failed', queue, reason)
        // Unconfirmed is not unsent: with the connection lost mid-batch, some copies may have arrived.
        if (lost) report.possible_duplicates = (report.possible_duplicates ?? 0) + group.length
        report.stop_reason = `publishing to ${queue} failed: ${reason}`
        report.stop_refusal ??= refusalOf(error)
        if (lost) throw error
        if (releaseFailure !== undefined) throw releaseFailure.error
      }
    }
  }

  try {
    while (true) {
      // A synchronous store (the embedded one) never yields on its own: give signal handlers a turn.
      await new Promise((resolve) => setImmediate(resolve))
      if (request.stopRequested?.()) {
        await settle()
        if (!report.stopped_early) {
          report.stopped_early = true
          report.stop_reason = 'interrupted'
        }
        break
      }
      // A stage of a canary (moveLimit) asks for no more than it may still move.
      const room = request.moveLimit === undefined ? Infinity : request.moveLimit - planned
      if (room <= 0) break
      const batch = await session.next(Math.min(sizer.next(), room))
      if (batch.length === 0) break
      sizer.saw(batch.map((message) => message.body.length))
      const {kept, groups} = plan(batch)
      // Selected beyond the limit: handed back unexamined (the next stage takes them).
      const beyond = trimGroups(groups, room)
      for (const group of groups.values()) planned += group.length
      await settle()
      // The previous batch's target failed (overlap only): this batch was not examined; close returns it.
      if (report.stopped_early) break
      counts.examined += batch.length - beyond.length
      for (const entry of kept) emit(entry.about, entry.outcome, entry.target ?? null, entry.error)
      const handBack = [...kept.map((entry) => entry.message), ...beyond]
      if (handBack.length > 0) await session.release(handBack)
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
  } catch (error) {
    failure = {error}
  }
  // Moves still running when the loop failed finish (and report) before the session closes.
  await moving
  // The close comes before the report is final: it may learn that acks never landed.
  try {
    await session.close()
  } catch (error) {
    // The loop's error, if any, is the cause; a close failing after it adds nothing.
    failure ??= {error}
  }
  const bound = countUnlandedAcks(session, report)
  if (failure === undefined) return report
  const carried = failedRun(failure.error, report)
  if (bound !== undefined) report.stop_reason = report.stop_reason === undefined ? bound : `${report.stop_reason}; ${bound}`
  throw carried
}

/**
 * Keeps the first `room` messages of the groups (in batch order per queue) and returns the rest,
 * which the caller hands back to the DLQ: a canary stage moves no more than its size.
 */
function trimGroups(groups: Map<string, Group>, room: number): ReservedMessage[] {
  const beyond: ReservedMessage[] = []
  let left = room
  for (const [queue, group] of groups) {
    if (group.length <= left) {
      left -= group.length
      continue
    }
    for (const entry of group.slice(left)) beyond.push(entry.message)
    if (left === 0) groups.delete(queue)
    else groups.set(queue, group.slice(0, left))
    left = 0
  }
  return beyond
}

/**
 * Adds to possible_duplicates the messages reported redriven whose ack a lost connection kept
 * from the broker (DrainSession.unlandedAcks): the broker delivers them again, so they are on
 * both. Returns what to say when the count is only an upper bound.
 */
function countUnlandedAcks(session: DrainSession, report: RedriveReport): string | undefined {
  const unlanded = session.unlandedAcks
  if (unlanded === undefined || unlanded.count === 0) return undefined
  report.possible_duplicates = (report.possible_duplicates ?? 0) + unlanded.count
  if (unlanded.exact) return undefined
  return `possible_duplicates is an upper bound: whether the ${unlanded.sent} removals sent before the connection was lost reached the broker could not be checked (${unlanded.reason ?? 'no answer'}), so all are counted`
}

/**
 * Refuses, before anything is read, a redrive that would cost messages deliveries on a queue
 * that counts them (BrokerAdapter.readsCostDeliveries): a dry run on a broker without a true peek
 * always (it would take every message and hand it back; with a true peek it browses, which is
 * free), any other run unless the operator accepted that what it leaves behind costs one
 * delivery each. Commands call it before asking for confirmation; redrive() calls it again.
 */
export async function checkDeliveryCost(request: Pick<RedriveRequest, 'source' | 'dlq' | 'dryRun' | 'selectors' | 'max' | 'acceptDeliveryCost' | 'copy'>, run: 'redrive' | 'purge' = 'redrive'): Promise<void> {
  // A dry run (or a copy) on a broker with a true peek browses (planOnly): it hands nothing back, so costs nothing.
  if ((request.dryRun || request.copy) && request.source.capabilities.truePeek) return
  const cost = await request.source.readsCostDeliveries?.(request.dlq)
  if (cost === undefined) return
  const limit = cost.limit === undefined ? '' : ` (delivery limit ${cost.limit})`
  const instead = cost.alternative === undefined ? '' : `; ${cost.alternative}`
  const does = run === 'purge' ? 'removes' : 'moves'
  if (request.dryRun) {
    throw new UsageError(`${cost.queue}${limit} counts deliveries: a dry run would take every message and hand it back, which ${cost.cost}. Nothing was read; a ${run} without --dry-run ${does} what it can${instead}`, 'delivery-cost')
  }
  if (request.acceptDeliveryCost) return
  const what = request.copy ? 'a copy' : `a ${run}`
  const leaves = request.copy
    ? 'every message (the originals stay)'
    : request.selectors.length > 0
      ? 'the messages the selection (--select, --where, --since, --until) leaves behind, and poison ones,'
      : run === 'purge'
        ? 'messages it cannot back up exactly (poison bodies, envelopes the backup line would not restore byte for byte)'
        : 'messages it cannot move (poison bodies, envelopes without an original queue, copies the target refused)'
  throw new UsageError(`${cost.queue}${limit} counts deliveries: ${what} hands ${leaves} back, which ${cost.cost}. Nothing was read; add --accept-delivery-cost to ${run} it anyway (one delivery per message left behind; messages beyond --max are not touched)`, 'delivery-cost')
}

async function moveGroup(
  session: DrainSession,
  target: BrokerAdapter,
  sameBroker: boolean,
  queue: string,
  group: Array<{message: ReservedMessage; outgoing: OutgoingMessage}>,
  step: {published: boolean; possiblyTwice: number},
): Promise<void> {
  const sources = group.map((entry) => entry.message)
  const outgoing = group.map((entry) => entry.outgoing)
  if (sameBroker && session.moveAtomically && target.capabilities.atomicMove && session.atomicTo?.(queue) !== false) {
    await session.moveAtomically(sources, queue, outgoing)
    return
  }
  // Publish with confirmation first; only then remove the originals (at-least-once across brokers).
  const receipt = await target.publish(queue, outgoing)
  step.published = true
  step.possiblyTwice = receipt?.possiblyTwice ?? 0
  await session.ack(sources)
}

/**
 * A dry run changes nothing: on brokers with a true peek it pages through with browse; on the
 * others it drains and releases everything, which the broker returns to place on close. Pages
 * are sized by bytes like a redrive's batches. Between pages it stops when asked (Ctrl-C, a
 * closed output) and resolves true; false when it saw every message.
 */
export async function planOnly(request: Pick<RedriveRequest, 'source' | 'dlq' | 'max' | 'stopRequested'>, visit: (message: BrokerMessage) => void): Promise<boolean> {
  const {source, dlq} = request
  const limit = request.max > 0 ? request.max : Infinity
  const sizer = new BatchSizer(DEFAULT_BATCH)
  /** A synchronous store never yields on its own: give signal handlers and the output a turn. */
  const stop = async () => {
    await new Promise((resolve) => setImmediate(resolve))
    return request.stopRequested?.() === true
  }
  let seen = 0
  if (source.capabilities.truePeek) {
    const total = request.max > 0 ? request.max : await source.count(dlq)
    while (seen < total) {
      if (await stop()) return true
      const page = await source.browse(dlq, {offset: seen, limit: Math.min(sizer.next(), total - seen)})
      sizer.saw(page.map((message) => message.body.length))
      for (const message of page) visit(message)
      seen += page.length
      if (page.length === 0) break
    }
    return false
  }
  const session = await source.drain(dlq, {max: request.max})
  try {
    while (seen < limit) {
      if (await stop()) return true
      const batch = await session.next(sizer.next())
      if (batch.length === 0) break
      sizer.saw(batch.map((message) => message.body.length))
      for (const message of batch) visit(message)
      seen += batch.length
      await session.release(batch)
    }
    return false
  } finally {
    await session.close()
  }
}

/** Marks a report stopped by a request to stop (runMoves says whether a signal or a closed output asked). */
export function stoppedOnRequest(report: RedriveReport): void {
  if (report.stopped_early) return
  report.stopped_early = true
  report.stop_reason = 'interrupted'
}
