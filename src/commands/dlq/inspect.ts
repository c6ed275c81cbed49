import {Args, Flags} from '@oclif/core'
import type {Interfaces} from '@oclif/core'

import {BqCommand} from '../../lib/cli/base-command.js'
import {readTrace, requireReceiveConsent, withBroker} from '../../lib/cli/broker.js'
import {dlqName} from '../../lib/cli/dlq-name.js'
import {selectionFlags, sharedFlags} from '../../lib/cli/flags.js'
import {GROUP_KEYS, inspectDlq, parseGroupBy} from '../../lib/ops/inspect.js'
import type {GroupKey} from '../../lib/ops/inspect.js'
import {describeTimes, openRedriveHistory} from '../../lib/ledger/redrive-history.js'
import type {RedriveHistory} from '../../lib/ledger/redrive-history.js'
import type {SchemaRegistry} from '../../lib/schema/registry.js'
import type {Selector} from '../../lib/ops/selector.js'
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
    registry: {...sharedFlags.registry, description: 'babelqueue-registry registry.json: count per group the messages whose data passes its URN\'s current schema, and show the first failing rule of the rest'},
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
    // ajv loads only when a registry is used; a broken one is a usage error before the broker is opened.
    const registry = flags.registry === undefined ? undefined : (await import('../../lib/schema/registry.js')).SchemaRegistry.load(flags.registry)
    const history = openRedriveHistory((text) => this.warn(text))
    try {
      return await this.inspectWith(flags, {dlq, groupBy, selectors, registry, history})
    } finally {
      history.close()
    }
  }

  private async inspectWith(flags: Interfaces.InferredFlags<typeof DlqInspect.flags>, context: {dlq: string; groupBy: GroupKey[]; selectors: Selector[]; registry?: SchemaRegistry; history: RedriveHistory}): Promise<TriageReport & {messages?: Record<string, unknown>[]}> {
    const {dlq, groupBy, selectors, registry, history} = context
    return withBroker(flags.broker, async (adapter) => {
      requireReceiveConsent(adapter, flags.receive, 'inspect')
      const listed: Array<[MessageView, number]> = []
      const report = await inspectDlq(adapter, {dlq, groupBy, selectors, scanLimit: flags.scan, history, registry, onMessage: flags.list ? (view, redrives) => listed.push([view, redrives]) : undefined})
      const messages = flags.list ? listed.map(([view, redrives]) => listJson(view, redrives)) : undefined
      if (this.jsonEnabled()) return {...report, ...(messages ? {messages} : {})}
      const now = Date.now()
      if (report.groups.length === 0) {
        if (report.scanned > 0) this.log(visible(`none of the ${report.scanned} message(s) examined in ${dlq} on ${report.broker} match ${selectors.map((s) => s.text).join(' and ')}`))
        else this.log(visible(`${dlq} on ${report.broker} is empty`))
        return report
      }
      const head = ['count', ...groupBy, 'oldest', 'newest', 'redriven before', ...(registry ? ['passing', 'first failing rule'] : [])]
      const rows = report.groups.map((g) => [
        String(g.count),
        ...groupBy.map((k, i) => (g.poison ? (i === 0 ? 'poison (not an envelope)' : '') : (g.key[k] ?? '-'))),
        g.oldest_failed_at === null ? '-' : `${formatAge(now - Date.parse(g.oldest_failed_at))} ago`,
        g.newest_failed_at === null ? '-' : `${formatAge(now - Date.parse(g.newest_failed_at))} ago`,
        g.redriven_before === 0 ? '-' : `${g.redriven_before} (up to ${g.most_redrives}×)`,
        ...(registry ? [g.passing === undefined ? '-' : String(g.passing), truncate(g.first_failing_rule ?? '-', 60)] : []),
      ])
      this.log(await renderTable(head, rows))
      if (messages) {
        this.log('')
        this.log(await renderTable(['#', 'id', 'urn', 'reason', 'exception', 'error', 'failed_at', 'original_queue', 'attempts', 'redrives'], listed.map(([view, redrives]) => [...listRow(view), String(redrives)])))
      }
      const matching = selectors.length > 0 ? ` matching ${selectors.map((s) => s.text).join(' and ')}` : ''
      this.logToStderr(`${dlq} on ${report.broker}: ${report.depth} waiting; ${report.scanned} examined, ${report.groups.reduce((sum, g) => sum + g.count, 0)}${matching} in ${report.groups.length} group(s)${report.truncated ? ` (stopped at --scan ${flags.scan})` : ''}`)
      if (report.redriven_before.messages > 0) {
        this.logToStderr(`redriven before (this run ledger): ${report.redriven_before.messages} of the examined messages (${describeTimes(report.redriven_before.by_times)})`)
      }
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

function listJson(view: MessageView, redrives: number): Record<string, unknown> {
  return {position: view.message.position ?? null, id: view.id ?? null, trace_id: view.traceId ?? null, urn: view.urn ?? null, attempts: view.attempts ?? null, redrives, poison: view.decodeError ?? null, dead_letter: deadLetterJson(view)}
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text
}
