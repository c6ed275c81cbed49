import {Flags} from '@oclif/core'
import type {Interfaces} from '@oclif/core'

import type {BrokerAdapter} from '../../lib/brokers/adapter.js'
import {BqCommand} from '../../lib/cli/base-command.js'
import {REFUSED_EXIT} from '../../lib/cli/exit-help.js'
import {withBroker} from '../../lib/cli/broker.js'
import {parseDuration} from '../../lib/cli/duration.js'
import {metricsFormatOf, sharedFlags} from '../../lib/cli/flags.js'
import {AlertError, ExitCode} from '../../lib/errors.js'
import {checkThresholds} from '../../lib/ops/dlq-alerts.js'
import {inflightOfOrigins} from '../../lib/ops/dlq-inflight.js'
import type {DlqAlert} from '../../lib/ops/dlq-alerts.js'
import {listDlqs} from '../../lib/ops/dlq-list.js'
import type {DlqSummary} from '../../lib/ops/dlq-list.js'
import {globToRegExp} from '../../lib/ops/match.js'
import {dlqFamilies} from '../../lib/output/dlq-metrics.js'
import {upFamilies, writeDownExposition} from '../../lib/output/exporter-health.js'
import {writeExposition} from '../../lib/output/openmetrics.js'
import type {ExpositionFormat} from '../../lib/output/openmetrics.js'
import {formatAge, renderTable} from '../../lib/output/table.js'

export interface DlqListResult {
  broker: string
  sample_limit: number
  dlqs: DlqSummary[]
  alerts: DlqAlert[]
  /** DLQs --max-age could not judge (nothing read), with why. */
  unchecked: Array<{dlq: string; reason: string}>
}

export default class DlqLs extends BqCommand {
  static override summary = 'List every dead-letter queue on the broker: depth, failure times, top reasons, original queues.'
  static override description = `A DLQ is a queue named <queue>.dlq (<queue>-dlq where names have no dots) or one the broker's own dead-letter facility fills (an SQS RedrivePolicy target, a RabbitMQ dead-letter-exchange target, Artemis's dead-letter address, Pulsar's <topic>-<subscription>-DLQ, Service Bus $DeadLetterQueue sub-queues). Failure times and reasons come from reading up to --sample messages of each DLQ with a true peek; on brokers without one (RabbitMQ, SQS) nothing is read and only depths are shown. RabbitMQ queues are listed through the management HTTP API (?management=http://host:15672 on the broker URL, default http://<host>:15672).

--format openmetrics writes the figures as an OpenMetrics text exposition instead of the table (gauges per DLQ: depth, sampled messages, messages per reason, oldest and newest failed_at age; and the in-flight counts of the queues the DLQs serve, where the broker shows them), for node_exporter's textfile collector or any scraper; --format prometheus writes the same in the Prometheus text format 0.0.4. bq_up says whether the broker was read: a run that cannot reach or is refused by the broker still writes bq_up 0, bq_last_exit_code and, where an earlier run succeeded, bq_last_success_timestamp_seconds, and exits with its failure's code. docs/metrics-and-alerting.md lists the metrics.

Exit status: 0, 5 when --fail-above or --max-age fired (the listing is still printed), 2 for usage errors, 4 when the broker cannot be reached, ${REFUSED_EXIT}, 1 when the broker cannot list its queues.`
  static override aliases = ['dlq:list']
  static override examples = [
    '<%= config.bin %> dlq ls',
    "<%= config.bin %> dlq ls --match 'orders*' --json",
    '<%= config.bin %> dlq ls --fail-above 100 --max-age 1h || page-the-on-call',
    '<%= config.bin %> dlq ls --format openmetrics > /var/lib/node_exporter/bq.prom.$$; [ -s /var/lib/node_exporter/bq.prom.$$ ] && mv /var/lib/node_exporter/bq.prom.$$ /var/lib/node_exporter/bq.prom',
    '<%= config.bin %> dlq ls -b "amqp://ops:secret@rabbit?management=http://rabbit:15672"',
  ]
  static override flags = {
    match: Flags.string({description: 'list only DLQs whose name matches this glob (*, ?)'}),
    sample: Flags.integer({description: 'read at most this many messages of each DLQ, with a true peek, for failure times and reasons (0 = read none)', default: 1000, min: 0}),
    'fail-above': Flags.integer({description: 'exit 5 when a DLQ holds more than this many messages', min: 0}),
    'max-age': Flags.string({description: 'exit 5 when a DLQ holds a message that failed longer ago than this (90s, 15m, 1h, 2d)'}),
    format: sharedFlags.metricsFormat,
    broker: sharedFlags.broker,
    context: sharedFlags.context,
    timeout: sharedFlags.timeout,
  }

  async run(): Promise<DlqListResult> {
    const {flags} = await this.parse(DlqLs)
    const metrics = metricsFormatOf(flags.format, this.jsonEnabled())
    let written = false
    try {
      return await this.list(flags, metrics, () => {
        written = true
      })
    } catch (error) {
      // An exporter says it could not look, rather than leaving the last good figures standing.
      if (metrics !== undefined && !written) await writeDownExposition(flags.broker, error, metrics)
      throw error
    }
  }

  private async list(flags: Interfaces.InferredFlags<typeof DlqLs.flags>, metrics: ExpositionFormat | undefined, wrote: () => void): Promise<DlqListResult> {
    const maxAgeMs = flags['max-age'] === undefined ? undefined : parseDuration(flags['max-age'], '--max-age')
    const match = flags.match === undefined ? undefined : globToRegExp(flags.match)
    return withBroker(flags.broker, async (adapter) => {
      const dlqs = await listDlqs(adapter, {match, sampleLimit: flags.sample})
      const now = Date.now()
      const {alerts, unchecked} = checkThresholds(dlqs, {failAbove: flags['fail-above'], maxAgeMs}, now)
      for (const u of unchecked) this.warn(`--max-age cannot judge ${u.dlq}: ${u.reason}`)
      const result: DlqListResult = {broker: adapter.displayUrl, sample_limit: flags.sample, dlqs, alerts, unchecked}
      if (metrics !== undefined) await this.printMetrics(adapter, result, metrics, now, wrote)
      else if (!this.jsonEnabled()) await this.print(result, now)
      if (alerts.length > 0) throw new AlertError(`${alerts.length} alert${alerts.length === 1 ? '' : 's'}: ${alerts.map((a) => a.message).join('; ')}`, result)
      return result
    }, {timeoutSeconds: flags.timeout})
  }

  /** The exposition on stdout; the table's notes are left out (bq_dlq_sampled_messages tells how much was read). */
  private async printMetrics(adapter: BrokerAdapter, result: DlqListResult, format: ExpositionFormat, now: number, wrote: () => void): Promise<void> {
    const inflight = await inflightOfOrigins(adapter, result.dlqs, (message) => this.warn(message))
    const labels = {broker: adapter.kind, brokerUrl: adapter.displayUrl}
    // An alert still read the broker: up, with the exit code the run ends with.
    const health = upFamilies(labels, now, result.alerts.length > 0 ? ExitCode.alert : ExitCode.ok)
    // From here on the figures are (being) written: a failure must not write a second exposition.
    wrote()
    await writeExposition([...dlqFamilies({...labels, dlqs: result.dlqs, inflight, now}), ...health], format)
  }

  private async print(result: DlqListResult, now: number): Promise<void> {
    if (result.dlqs.length === 0) {
      this.log(`no dead-letter queues on ${result.broker}`)
      return
    }
    const ago = (iso: string | null) => (iso === null ? '-' : `${formatAge(now - Date.parse(iso))} ago`)
    const rows = result.dlqs.map((d) => [
      d.dlq, d.kind, String(d.depth), ago(d.oldest_failed_at), ago(d.newest_failed_at),
      d.top_reasons.map((r) => `${r.reason} (${r.count})`).join(', ') || '-',
      d.original_queues.join(', ') || '-',
      d.not_sampled === undefined ? (d.sampled < d.depth ? `${d.sampled} of ${d.depth}` : 'all') : 'none',
    ])
    this.log(await renderTable(['dlq', 'kind', 'depth', 'oldest', 'newest', 'top reasons', 'original queues', 'sampled'], rows))
    const partial = result.dlqs.filter((d) => d.not_sampled === undefined && d.sampled < d.depth).length
    if (partial > 0) this.logToStderr(`note: ${partial} DLQ(s) hold more than --sample ${result.sample_limit}: their times and reasons are from the first ${result.sample_limit} messages`)
    const refused = result.dlqs.find((d) => d.not_sampled !== undefined)?.not_sampled
    if (refused !== undefined) this.logToStderr(`note: nothing was read (${refused}); depths only`)
  }
}
