import type {BrokerAdapter} from '../brokers/adapter.js'
import type {TraceSource} from './trace-sources.js'

/**
 * What reading one place costs `bq trace`: nothing on a broker with a true peek (and for the
 * in-flight and staging reads, which only look), a delivery where a browse takes each message and
 * hands it back (RabbitMQ: flagged redelivered, and on a quorum queue one x-delivery-count toward
 * its limit; SQS: one receive count each). Such a place is read only with --accept-delivery-cost.
 */
export type ReadCost = {free: true} | {free: false; why: string}

export async function readCost(adapter: BrokerAdapter, source: TraceSource): Promise<ReadCost> {
  if (source.read !== 'browse') return {free: true}
  if (adapter.capabilities.truePeek && !adapter.capabilities.receiveSideEffects) return {free: true}
  const counted = await adapter.readsCostDeliveries?.(source.queue)
  if (counted !== undefined) return {free: false, why: `${counted.queue} counts deliveries: reading ${counted.cost}${counted.limit === undefined ? '' : ` (limit ${counted.limit})`}`}
  if (adapter.capabilities.receiveSideEffects) return {free: false, why: `${adapter.kind} has no true peek: reading raises each message's receive count`}
  return {free: false, why: `${adapter.kind} has no true peek: reading takes each message and hands it back, flagged redelivered`}
}
