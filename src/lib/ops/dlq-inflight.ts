import type {BrokerAdapter} from '../brokers/adapter.js'
import {BqError, ExitCode, QueueNotFoundError} from '../errors.js'
import type {InflightGauges} from '../output/inflight-metrics.js'
import type {DlqSummary} from './dlq-list.js'

/**
 * The in-flight counts of the queues some DLQs serve (their original queues), for `bq dlq ls
 * --format openmetrics`: counts only (limit 0), each queue once, in name order. None where the
 * adapter has no inflight(). A queue that no longer exists is left out; a figure the broker
 * refuses (a permission) is left out with a warning, so the DLQ figures still get written; a
 * broker that cannot be reached fails the run as any listing does.
 */
export async function inflightOfOrigins(adapter: BrokerAdapter, dlqs: DlqSummary[], warn: (message: string) => void): Promise<InflightGauges[]> {
  if (adapter.inflight === undefined) return []
  const queues = [...new Set(dlqs.flatMap((d) => d.original_queues))].sort()
  const found: InflightGauges[] = []
  for (const queue of queues) {
    try {
      const report = await adapter.inflight(queue, {limit: 0})
      found.push({queue, gauges: report.gauges})
    } catch (error) {
      if (error instanceof QueueNotFoundError) continue
      if (!(error instanceof BqError) || error.exitCode === ExitCode.connection) throw error
      warn(`in-flight counts of ${queue} left out: ${error.message}`)
    }
  }
  return found
}
