/**
 * `bq inflight ls` on Pulsar, from the topic's stats (admin REST): per subscription, `unacked`
 * (unackedMessages: delivered to its consumers and not acknowledged), `backlog` (msgBacklog, the
 * precise one: the entries the subscription has not acknowledged, delivered or not; an entry is
 * one message, or one batch of a batching producer) and `consumers`.
 *
 * The broker tracks each delivery awaiting an ack only on Shared and Key_Shared subscriptions
 * (it must know whom to redeliver to); an Exclusive or Failover subscription reports 0 unacked,
 * and what its consumer holds is part of its backlog. The messages themselves are not shown: the
 * stats are counts, and which messages a consumer holds is not in any admin answer.
 */
import type {InflightGauge, InflightReport} from '../adapter.js'
import type {TopicStats} from './admin.js'

export const PULSAR_COUNTS_ONLY =
  'Pulsar reports un-acknowledged deliveries as counts per subscription and consumer; which messages a consumer holds is in no admin answer'
export const PULSAR_RETURNS_ITSELF =
  'Pulsar redelivers un-acknowledged messages itself: when their consumer disconnects (to the subscription\'s other or next consumer), when the consumer\'s ackTimeout passes (off unless the consumer sets one), or when it negatively acknowledges them; a live consumer without an ackTimeout keeps them'

const HELP = {
  unacked: 'delivered to the subscription\'s consumers, not acknowledged (counted on Shared and Key_Shared subscriptions; 0 on Exclusive and Failover)',
  backlog: 'not yet acknowledged by the subscription, delivered or not (Pulsar counts stored entries: a producer\'s batch counts once)',
  consumers: 'consumers connected to the subscription',
}

/** The gauges of one topic's stats, subscriptions in name order. */
export function pulsarInflight(stats: TopicStats): InflightReport {
  const gauges: InflightGauge[] = []
  for (const [subscription, sub] of Object.entries(stats.subscriptions ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    const labels = {subscription}
    gauges.push(
      {name: 'unacked', value: sub.unackedMessages ?? 0, labels, help: HELP.unacked},
      {name: 'backlog', value: sub.msgBacklog ?? 0, labels, help: HELP.backlog},
      {name: 'consumers', value: sub.consumers?.length ?? 0, labels, help: HELP.consumers},
    )
  }
  return {gauges, countsOnly: PULSAR_COUNTS_ONLY, returnsItself: PULSAR_RETURNS_ITSELF}
}
