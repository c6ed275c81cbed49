import {Args, Flags} from '@oclif/core'

import type {InflightGauge} from '../../lib/brokers/adapter.js'
import {BqCommand} from '../../lib/cli/base-command.js'
import {REFUSED_EXIT} from '../../lib/cli/exit-help.js'
import {withBroker} from '../../lib/cli/broker.js'
import {visible} from '../../lib/output/control-chars.js'
import {warnIfMissing} from '../../lib/cli/missing-queue.js'
import {metricsFormatOf, sharedFlags} from '../../lib/cli/flags.js'
import {inflightElementJson, listInflight} from '../../lib/ops/inflight-list.js'
import type {InflightListing} from '../../lib/ops/inflight-list.js'
import {inflightFamilies} from '../../lib/output/inflight-metrics.js'
import {writeExposition} from '../../lib/output/openmetrics.js'
import {formatAge, formatBytes, renderTable} from '../../lib/output/table.js'

export interface InflightListResult {
  queue: string
  broker: string
  gauges: InflightGauge[]
  /** The elements read (up to --limit); empty where the broker shows counts only. */
  elements: Record<string, unknown>[]
  counts_only: string | null
  returns_itself: string | null
}

export default class InflightLs extends BqCommand {
  static override summary = "Show what a queue's consumers have taken and not finished: counts from the broker, and the messages where the broker lets bq read them."
  static override description = `Every broker keeps its own numbers about work it has handed to a consumer and not yet seen finished. bq shows them as the broker counts them, looking without changing anything:

  Redis             the SDKs' <queue>:processing list: each element's envelope, age (from meta.created_at) and attempts
  Redis (Laravel)   the :reserved set (each job's reservation expiry) and :delayed (each job's due time)
  RabbitMQ          unacknowledged messages and consumers (management API)
  SQS               ApproximateNumberOfMessagesNotVisible and ApproximateNumberOfMessagesDelayed
  Kafka             lag per partition of each consumer group that reads the topic
  Artemis           delivering and scheduled messages
  Pulsar            unacked messages and backlog per subscription
  Service Bus       active, scheduled and deferred messages

Where a broker shows counts only, bq says why. Exit status: 0; 2 for usage errors; 4 when the broker cannot be reached; ${REFUSED_EXIT}; 1 when the queue does not exist, or when the broker cannot count (RabbitMQ without its management API: cannot-count-inflight).`
  static override examples = [
    '<%= config.bin %> inflight ls orders',
    '<%= config.bin %> inflight ls orders --json',
    '<%= config.bin %> inflight ls orders -b "redis://127.0.0.1:6379?prefix=queues:"',
  ]
  static override args = {queue: Args.string({description: 'the queue whose in-flight work to show', required: true})}
  static override flags = {
    limit: Flags.integer({description: 'show at most this many elements, where the broker shows them (0 = counts only)', default: 20, min: 0}),
    format: sharedFlags.metricsFormat,
    broker: sharedFlags.broker,
    context: sharedFlags.context,
    timeout: sharedFlags.timeout,
  }

  async run(): Promise<InflightListResult> {
    const {args, flags} = await this.parse(InflightLs)
    const metrics = metricsFormatOf(flags.format, this.jsonEnabled())
    return withBroker(flags.broker, async (adapter) => {
      const listing = await listInflight(adapter, args.queue, flags.limit)
      await warnIfMissing(adapter, args.queue, (text) => this.warn(text))
      const now = Date.now()
      if (metrics !== undefined) await writeExposition(inflightFamilies({broker: adapter.kind, brokerUrl: adapter.displayUrl}, [listing]), metrics)
      else if (!this.jsonEnabled()) await this.print(listing, now)
      return {
        queue: listing.queue,
        broker: listing.broker,
        gauges: listing.gauges,
        elements: listing.rows.map((row) => inflightElementJson(row, now)),
        counts_only: listing.countsOnly ?? null,
        returns_itself: listing.returnsItself ?? null,
      }
    }, {timeoutSeconds: flags.timeout, warn: (message) => this.warn(message)})
  }

  private async print(listing: InflightListing, now: number): Promise<void> {
    const gaugeRows = listing.gauges.map((g) => [
      g.name,
      Object.entries(g.labels ?? {}).map(([k, v]) => `${k}=${v}`).join(' ') || '-',
      String(g.value),
      g.help ?? '',
    ])
    this.log(visible(`${listing.queue} on ${listing.broker}`))
    this.log(gaugeRows.length === 0 ? 'no in-flight figures' : await renderTable(['in flight', 'scope', 'count', 'meaning'], gaugeRows))
    if (listing.rows.length > 0) {
      const rows = listing.rows.map(({element, view}) => {
        const created = view.createdAt
        const until = element.expiresAt ?? element.dueAt
        return [
          element.place,
          element.position ?? '',
          view.id ?? '-',
          view.urn ?? '-',
          view.attempts === undefined ? '-' : String(view.attempts),
          formatAge(created === undefined ? undefined : now - created),
          until === undefined ? '-' : until <= now ? `${formatAge(now - until)} ago` : `in ${formatAge(until - now)}`,
          view.decodeError ? 'poison' : formatBytes(view.size),
        ]
      })
      this.log(await renderTable(['place', '#', 'id', 'urn', 'attempts', 'age', 'expires/due', 'size'], rows))
    }
    if (listing.countsOnly !== undefined) this.logToStderr(`note: counts only: ${listing.countsOnly}`)
    if (listing.returnsItself !== undefined) this.logToStderr(`note: ${listing.returnsItself}`)
  }
}
