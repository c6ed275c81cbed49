import type {InflightGauge} from '../brokers/adapter.js'
import {metricName} from './openmetrics.js'
import type {MetricFamily} from './openmetrics.js'

/**
 * In-flight gauges as metric families (for `bq inflight ls` and `bq dlq ls` under --format
 * openmetrics): one family per gauge name, `bq_inflight_<name>_messages`, or `bq_inflight_consumers`
 * for the one gauge that does not count messages. One family per name, not one family with a
 * `state` label, because the brokers' figures overlap (Pulsar's backlog includes its unacked
 * messages): a sum over states would count messages twice. Each family's HELP is the gauge's own.
 */

/** The queues whose gauges to write, all on one broker. */
export interface InflightGauges {
  queue: string
  gauges: InflightGauge[]
}

/** Labels every bq metric carries: the broker's kind, its URL as bq prints it, and the queue. */
export interface BrokerLabels {
  /** The adapter's kind: redis, rabbitmq, sqs, kafka, artemis, pulsar, service-bus, sqlite. */
  broker: string
  /** The broker URL without credentials: tells two brokers of one kind apart on one host. */
  brokerUrl: string
}

/** The labels bq puts first; a gauge's own label of the same name is written as `gauge_<name>`. */
const OWN_LABELS = new Set(['broker', 'broker_url', 'queue'])

export function inflightMetricName(gauge: string): string {
  const name = metricName(gauge)
  return name === 'consumers' ? 'bq_inflight_consumers' : `bq_inflight_${name}_messages`
}

export function inflightFamilies(broker: BrokerLabels, listings: InflightGauges[]): MetricFamily[] {
  const families = new Map<string, MetricFamily>()
  for (const {queue, gauges} of listings) {
    for (const gauge of gauges) {
      const name = inflightMetricName(gauge.name)
      let family = families.get(name)
      if (family === undefined) {
        family = {name, type: 'gauge', help: helpOf(gauge), samples: []}
        families.set(name, family)
      }
      const labels: Record<string, string> = {broker: broker.broker, broker_url: broker.brokerUrl, queue}
      for (const [key, value] of Object.entries(gauge.labels ?? {})) {
        const label = metricName(key)
        labels[OWN_LABELS.has(label) ? `gauge_${label}` : label] = value
      }
      family.samples.push({labels, value: gauge.value})
    }
  }
  return [...families.values()]
}

function helpOf(gauge: InflightGauge): string {
  if (gauge.help !== undefined && gauge.help.trim() !== '') return gauge.help.trim()
  return gauge.name === 'consumers' ? 'Consumers of the queue, as the broker counts them.' : `Messages in flight as the broker counts them (${gauge.name}).`
}
