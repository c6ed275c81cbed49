import type {BrokerAdapter, BrokerMessage} from '../brokers/adapter.js'
import {describeError, refusalOf} from '../errors.js'
import {RateLimiter} from './rate.js'
import {BatchSizer, DEFAULT_BATCH} from './batch-sizer.js'
import {failedRun} from './failed-run.js'
import {planBatch} from './plan-batch.js'
import type {PlanRules} from './plan-batch.js'
import type {About, RedriveOutcome, RedriveReport, RedriveRequest} from './redrive-types.js'

/**
 * `dlq redrive --copy`: publish the same reset copies a redrive would, and leave every original
 * on the DLQ. Where the broker has a true peek the DLQ is browsed page by page (nothing is taken);
 * elsewhere it is drained and every message released, so the broker returns them all at the
 * session's end (on a queue that counts deliveries, only with --accept-delivery-cost, see
 * checkDeliveryCost). Called by redrive() once its checks passed; the dry run is redrive's own.
 */
export async function copyMessages(
  request: RedriveRequest,
  target: BrokerAdapter,
  rules: PlanRules,
  emit: (about: About, outcome: RedriveOutcome, targetQueue: string | null, error?: string) => void,
  report: RedriveReport,
): Promise<RedriveReport> {
  const limiter = request.rate ? new RateLimiter(request.rate) : undefined
  const cap = Math.max(1, Math.min(request.batchSize ?? DEFAULT_BATCH, request.rate ?? Infinity))
  const sizer = new BatchSizer(cap, request.batchSize === undefined ? 1 : cap)
  const stop = () => {
    if (!request.stopRequested?.()) return false
    report.stopped_early = true
    report.stop_reason = 'interrupted'
    return true
  }

  /** Copies one batch; false when the run must stop (a target refused its copies). */
  const copyBatch = async (batch: BrokerMessage[]): Promise<boolean> => {
    sizer.saw(batch.map((message) => message.body.length))
    report.counts.examined += batch.length
    const {kept, groups} = planBatch(batch, rules)
    for (const entry of kept) emit(entry.about, entry.outcome, entry.target ?? null, entry.error)
    for (const [queue, group] of groups) {
      await limiter?.take(group.length)
      try {
        await target.publish(queue, group.map((entry) => entry.outgoing))
      } catch (error) {
        for (const entry of group) emit(entry.about, 'failed', queue, describeError(error))
        report.stopped_early = true
        report.stop_reason = `publishing to ${queue} failed: ${describeError(error)}`
        report.stop_refusal ??= refusalOf(error)
        return false
      }
      for (const entry of group) emit(entry.about, 'redriven', queue)
    }
    return true
  }

  const {source, dlq} = request
  try {
    if (source.capabilities.truePeek) {
      // A browse reads without taking: the DLQ is exactly as it was.
      const total = request.max > 0 ? request.max : await source.count(dlq)
      let seen = 0
      while (seen < total && !stop()) {
        const page = await source.browse(dlq, {offset: seen, limit: Math.min(sizer.next(), total - seen)})
        if (page.length === 0) break
        seen += page.length
        if (!(await copyBatch(page))) break
      }
      return report
    }
    const session = await source.drain(dlq, {max: request.max})
    try {
      while (!stop()) {
        await new Promise((resolve) => setImmediate(resolve))
        const batch = await session.next(sizer.next())
        if (batch.length === 0) break
        const going = await copyBatch(batch)
        // Every original goes back: the session returns them all when it closes.
        await session.release(batch)
        if (!going) break
      }
    } finally {
      await session.close()
    }
    return report
  } catch (error) {
    throw failedRun(error, report)
  }
}
