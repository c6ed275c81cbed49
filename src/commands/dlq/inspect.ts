import {Args, Flags} from '@oclif/core'

import {BqCommand} from '../../lib/cli/base-command.js'
import {readTrace, requireReceiveConsent, withBroker} from '../../lib/cli/broker.js'
import {dlqName} from '../../lib/cli/dlq-name.js'
import {selectionFlags, sharedFlags} from '../../lib/cli/flags.js'
import {GROUP_KEYS, inspectDlq, parseGroupBy} from '../../lib/ops/inspect.js'
import {selectorsFromFlags} from '../../lib/ops/match.js'
import type {TriageReport} from '../../lib/ops/inspect.js'
import type {MessageView} from '../../lib/ops/message-view.js'
import {deadLetterJson} from '../../lib/output/message-rows.js'
import {formatAge, isoTime, renderTable} from '../../lib/output/table.js'
import {visible} from '../../lib/output/control-chars.js'

export default class DlqInspect extends BqCommand {
  static override summary = 'Triage a dead-letter queue: what failed, why, and since when.'
  static override description = `Reads <queue>.dlq (or --dlq) without consuming it and groups the messages by reason, URN, exception and original queue (--group-by), with counts and the oldest and newest failed_at. Bodies that are not envelopes are counted as their own "poison" group.`
  static override aliases = ['inspect-dlq']
  static override examples = [
    '<%= config.bin %> dlq inspect orders',
    '<%= config.bin %> dlq inspect orders --group-by reason,exception',
    '<%= config.bin %> dlq inspect orders --list --json',
    '<%= config.bin %> dlq inspect orders --since 1h --where \'dead_letter.exception == "TimeoutError"\'',
  ]
  static override args = {queue: Args.string({description: 'the queue whose DLQ to read (or the DLQ itself)', required: true})}
  static override flags = {
    dlq: Flags.string({description: 'read this dead-letter queue instead of <queue>.dlq'}),
    'group-by': Flags.string({description: `comma-separated grouping keys (${GROUP_KEYS.join(', ')})`, multiple: true}),
    list: Flags.boolean({description: 'also list each message on one line'}),
    ...selectionFlags,
    scan: Flags.integer({description: 'look at no more than this many messages', default: 100_000, min: 1}),
    receive: sharedFlags.receive,
    broker: sharedFlags.broker,
    context: sharedFlags.context,
    timeout: sharedFlags.timeout,
  }

  async run(): Promise<TriageReport & {messages?: Record<string, unknown>[]}> {
    const {args, flags} = await this.parse(DlqInspect)
    const dlq = dlqName(args.queue, flags.dlq)
    const groupBy = parseGroupBy(flags['group-by'])
    const selectors = await selectorsFromFlags(flags, 'failed_at')
    return withBroker(flags.broker, async (adapter) => {
      requireReceiveConsent(adapter, flags.receive, 'inspect')
      const listed: MessageView[] = []
      const report = await inspectDlq(adapter, {dlq, groupBy, selectors, scanLimit: flags.scan, onMessage: flags.list ? (view) => listed.push(view) : undefined})
      const messages = flags.list ? listed.map(listJson) : undefined
      if (this.jsonEnabled()) return {...report, ...(messages ? {messages} : {})}
      const now = Date.now()
      if (report.groups.length === 0) {
        if (report.scanned > 0) this.log(visible(`none of the ${report.scanned} message(s) examined in ${dlq} on ${report.broker} match ${selectors.map((s) => s.text).join(' and ')}`))
        else this.log(visible(`${dlq} on ${report.broker} is empty`))
        return report
      }
      const head = ['count', ...groupBy, 'oldest', 'newest']
      const rows = report.groups.map((g) => [
        String(g.count),
        ...groupBy.map((k, i) => (g.poison ? (i === 0 ? 'poison (not an envelope)' : '') : (g.key[k] ?? '-'))),
        g.oldest_failed_at === null ? '-' : `${formatAge(now - Date.parse(g.oldest_failed_at))} ago`,
        g.newest_failed_at === null ? '-' : `${formatAge(now - Date.parse(g.newest_failed_at))} ago`,
      ])
      this.log(await renderTable(head, rows))
      if (messages) {
        this.log('')
        this.log(await renderTable(['#', 'id', 'urn', 'reason', 'exception', 'error', 'failed_at', 'original_queue', 'attempts'], listed.map(listRow)))
      }
      const matching = selectors.length > 0 ? ` matching ${selectors.map((s) => s.text).join(' and ')}` : ''
      this.logToStderr(`${dlq} on ${report.broker}: ${report.depth} waiting; ${report.scanned} examined, ${report.groups.reduce((sum, g) => sum + g.count, 0)}${matching} in ${report.groups.length} group(s)${report.truncated ? ` (stopped at --scan ${flags.scan})` : ''}`)
      if (report.related_queues !== undefined && report.related_queues.length > 0) {
        this.logToStderr(`related: ${report.related_queues.map((r) => `${r.queue} (${r.role}, ${r.count})`).join(', ')}`)
      }
      if (!adapter.capabilities.truePeek && report.scanned > 0) {
        this.logToStderr(`note: ${adapter.kind} has no true peek; the messages read ${readTrace(adapter)}`)
      }
      return report
    }, {timeoutSeconds: flags.timeout, warn: (message) => this.warn(message)})
  }
}

function listRow(view: MessageView): string[] {
  const d = view.deadLetter
  return [view.message.position ?? '', view.id ?? '-', view.urn ?? (view.decodeError ? 'poison' : '-'), d?.reason ?? '-', d?.exception ?? '-', truncate(d?.error ?? view.decodeError ?? '-', 60), isoTime(d?.failedAt) ?? '-', d?.originalQueue ?? '-', view.attempts === undefined ? '-' : String(view.attempts)]
}

function listJson(view: MessageView): Record<string, unknown> {
  return {position: view.message.position ?? null, id: view.id ?? null, trace_id: view.traceId ?? null, urn: view.urn ?? null, attempts: view.attempts ?? null, poison: view.decodeError ?? null, dead_letter: deadLetterJson(view)}
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}
