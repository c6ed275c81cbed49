import {Args, Flags} from '@oclif/core'

import type {BrokerAdapter, BrowseFrom} from '../lib/brokers/adapter.js'
import {BqCommand} from '../lib/cli/base-command.js'
import {readTrace, requireReceiveConsent, withBroker} from '../lib/cli/broker.js'
import {recordRun} from '../lib/ledger/record.js'
import {selectionFlags, sharedFlags} from '../lib/cli/flags.js'
import {stopOnInterrupt} from '../lib/cli/interrupt.js'
import type {StopRequest} from '../lib/cli/interrupt.js'
import {InterruptedError, UsageError} from '../lib/errors.js'
import {browseQueue} from '../lib/ops/browse.js'
import {followQueue, refuseFollow} from '../lib/ops/follow.js'
import type {BrowseOutcome} from '../lib/ops/browse.js'
import {globToRegExp, keySelector, selectorsFromFlags} from '../lib/ops/match.js'
import {parseTimeWindow} from '../lib/ops/time-window.js'
import type {Selector} from '../lib/ops/selector.js'
import type {MessageView} from '../lib/ops/message-view.js'
import type {Masker} from '../lib/ops/mask.js'
import {MESSAGE_HEAD, exportLine, maskedMessageJson, messageRow} from '../lib/output/message-rows.js'
import {startProgress} from '../lib/output/progress.js'
import {isTerminal} from '../lib/output/style.js'
import {renderTable, tsvRow} from '../lib/output/table.js'
import {OutputWriter} from '../lib/output/writer.js'

export interface PeekResult {
  queue: string
  broker: string
  /** Messages waiting in the queue (ready ones). */
  depth: number
  scanned: number
  messages: Record<string, unknown>[]
}

export default class Peek extends BqCommand {
  static override summary = 'Look at the messages at the head of a queue without consuming them.'
  static override description = `On brokers with a true peek nothing changes. Where a read is a delivery, the messages are taken and returned to their original places, which marks them redelivered; bq says so. Where a read raises a receive count, peek refuses unless --receive is given. The broker table in docs/brokers.md says which broker does what.

Shows the first --limit messages (10 by default); --all (or --limit 0) reads every message. An export (--jsonl, --raw, --json) that stops at the default limit while more are waiting says so in a warning. --jsonl and --raw write each message as it is read.

--where (a CEL expression over data, meta, attempts, dead_letter, job, trace_id and headers), --since and --until (on the enqueue time) and --select choose which messages are shown or exported; see docs/messages.md.

With --registry, the data fields the registry marks x-gdpr-sensitive are masked in --json, --jsonl and --follow output; --unmask shows them. A masked export line carries "masked":[…], and bq replay refuses it.

--jsonl --with-headers keeps each message's application headers (traceparent and the like; not bq's own bq-* projection nor broker bookkeeping): every line is {"envelope":{…},"headers":{"name":"value",…}}, the envelope exactly as --jsonl writes it. bq replay restores those headers; bq validate checks the envelope inside. Plain --jsonl stays one envelope per line.

--follow prints every message waiting, then each new one as it arrives (polling twice a second from where it left off, consuming nothing), as JSONL with --jsonl or --raw, else as tab-separated rows, until Ctrl-C (exit 130) or SIGTERM (143). Brokers where a read is a delivery or a receive (RabbitMQ, SQS) cannot be followed.

Ctrl-C, SIGTERM or SIGHUP stops the read, keeps what was written, and exits 130, 143 or 129.`
  static override examples = [
    '<%= config.bin %> peek orders',
    '<%= config.bin %> peek orders --limit 50 --urn "urn:babel:orders:*"',
    '<%= config.bin %> peek orders.dlq --jsonl --all > export.jsonl',
    '<%= config.bin %> peek orders.dlq --jsonl --with-headers --all > export-with-headers.jsonl',
    '<%= config.bin %> peek orders -b "$STAGING_BROKER" --headers',
    '<%= config.bin %> peek orders.dlq --follow --jsonl --urn "urn:babel:orders:*"',
    '<%= config.bin %> peek orders.dlq -b "$LOG_BROKER" --from-time 2026-11-30T08:00:00Z',
    '<%= config.bin %> peek orders --where \'data.amount > 1000 && headers["x-tenant"] == "acme"\' --since 2h',
  ]
  static override args = {queue: Args.string({description: 'queue to look at', required: true})}
  static override flags = {
    limit: sharedFlags.limit,
    all: Flags.boolean({description: 'every message, not only the first --limit (same as --limit 0); with a filter (--urn, --where, …), up to --scan', exclusive: ['limit']}),
    urn: Flags.string({description: 'only messages whose URN matches this glob'}),
    'trace-id': Flags.string({description: 'only messages of this trace'}),
    ...selectionFlags,
    scan: Flags.integer({description: 'with filters, look at no more than this many messages', default: 10_000, min: 1}),
    jsonl: Flags.boolean({description: 'print one envelope per line (an export replay can read)', exclusive: ['raw']}),
    raw: Flags.boolean({description: 'print each message exactly as stored (a Redis frame whole), one per line'}),
    'with-headers': Flags.boolean({description: 'with --jsonl: print {"envelope":…,"headers":{…}} per line, keeping each message\'s application headers for replay', dependsOn: ['jsonl']}),
    headers: Flags.boolean({description: 'show the native broker metadata of each message (piped: a headers column of compact JSON)'}),
    follow: Flags.boolean({char: 'f', description: 'keep printing new messages as they arrive (with the same filters) until Ctrl-C; brokers with a true peek only', exclusive: ['limit', 'all', 'last']}),
    'from-beginning': Flags.boolean({description: 'brokers that keep a log: read the whole retained log, not only what a redrive would still see', exclusive: ['from-offset', 'from-time', 'last'], helpGroup: 'LOG'}),
    'from-offset': Flags.string({description: 'brokers that keep a log: read from OFFSET in every partition, or from PARTITION:OFFSET in one', exclusive: ['from-time', 'last'], helpGroup: 'LOG'}),
    'from-time': Flags.string({description: 'brokers that keep a log: read from the first record at or after this time (ISO 8601 or Unix ms)', exclusive: ['last'], helpGroup: 'LOG'}),
    last: Flags.integer({description: 'brokers that keep a log: read the last N records of each partition', min: 1, helpGroup: 'LOG'}),
    registry: sharedFlags.registry,
    unmask: sharedFlags.unmask,
    receive: sharedFlags.receive,
    broker: sharedFlags.broker,
    context: sharedFlags.context,
    timeout: sharedFlags.timeout,
  }

  async run(): Promise<PeekResult> {
    const {flags, args, metadata} = await this.parse(Peek)
    const selectors: Selector[] = []
    if (flags.urn !== undefined) {
      const regex = globToRegExp(flags.urn)
      selectors.push(keySelector('urn', (v) => regex.test(v), `urn=${flags.urn}`))
    }
    if (flags['trace-id'] !== undefined) selectors.push(keySelector('trace_id', (v) => v === flags['trace-id'], `trace_id=${flags['trace-id']}`))
    // A queue's messages are timed by when the broker took them (else meta.created_at).
    const now = Date.now()
    selectors.push(...(await selectorsFromFlags(flags, 'enqueued', now)))
    // --since on the enqueue time can be pushed down to a broker that seeks by time (Kafka).
    const notBefore = parseTimeWindow(flags, now)?.since
    const from = logPosition(flags)
    const limit = flags.all || flags.limit === 0 ? Number.POSITIVE_INFINITY : flags.limit
    const json = this.jsonEnabled()
    if (flags.follow && json) throw new UsageError('--follow never ends, so it cannot print one JSON object at the end: use --follow --jsonl (one envelope per line)')
    // --jsonl and --raw stream each message out as it is read (an export can be the whole queue).
    const exporting = !json && (flags.jsonl || flags.raw)
    const masker = await this.masker(flags)
    return withBroker(flags.broker, async (adapter) => {
      // Sensitive fields shown in clear are an access worth auditing: one ledger row says who, when, where.
      if (flags.unmask) await recordRun({command: 'peek --unmask', broker: adapter.displayUrl, source: args.queue, selection: {registry: flags.registry}}, async () => undefined, {warn: (text) => this.warn(text), tally: () => ({})})
      // Before --receive: no consent makes a broker without a true peek followable.
      if (flags.follow) refuseFollow(adapter)
      requireReceiveConsent(adapter, flags.receive, 'peek')
      if (from !== undefined && !adapter.capabilities.logBrowse) {
        throw new UsageError(`${adapter.kind} keeps no log to read from a position: --from-beginning, --from-offset, --from-time and --last need a broker that keeps a log (see the broker table in docs/brokers.md)`)
      }
      const depth = await adapter.count(args.queue)
      // An export's progress line (stderr, on a terminal); its total is known for a plain head read.
      const progress = exporting && !flags.follow ? startProgress({unit: 'exported', total: selectors.length === 0 && from === undefined ? Math.min(depth, limit) : undefined, json}) : undefined
      const out = new OutputWriter()
      out.statusLine = progress
      const interrupt = stopOnInterrupt()
      if (flags.follow) return this.follow(adapter, {queue: args.queue, selectors, from, out, interrupt, raw: flags.raw, jsonl: flags.jsonl, withHeaders: flags['with-headers'], masker})
      let exported = 0
      let skipped = 0
      const exportView = async (view: MessageView) => {
        exported++
        progress?.update(exported)
        if (flags.raw) {
          // The value exactly as stored (a Redis frame whole): a binary body must not become U+FFFD.
          out.write(view.message.stored ?? view.message.body)
          out.write('\n')
        } else {
          const line = exportLine(view, {withHeaders: flags['with-headers'], masker})
          if (line === undefined) skipped++
          else out.line(line)
        }
        await out.maybeFlush()
      }
      let outcome: BrowseOutcome
      try {
        const request = {queue: args.queue, limit, selectors, scanLimit: flags.scan, validate: true, stopRequested: interrupt.requested, ...(from ? {from} : {}), ...(notBefore === undefined ? {} : {notBefore})}
        outcome = await browseQueue(adapter, request, exporting ? exportView : undefined)
        await out.flush()
      } finally {
        progress?.stop()
        interrupt.dispose()
      }
      const shown = exporting ? exported : outcome.views.length
      const result: PeekResult = {queue: args.queue, broker: adapter.displayUrl, depth, scanned: outcome.scanned, messages: outcome.views.map((v) => maskedMessageJson(v, {headers: flags.headers, masker}))}
      if ((json || exporting) && metadata.flags.limit?.setFromDefault && !flags.all && shown >= limit && (await moreWaiting(adapter, args.queue, outcome.scanned, depth, from))) {
        this.warn(`the export is partial: it stopped at the default --limit ${limit} while ${args.queue} holds more; add --limit N, or --all (same as --limit 0) for every message`)
      }
      if (!json && !exporting && outcome.views.length > 0) {
        const now = Date.now()
        out.line(await renderTable(flags.headers && !isTerminal() ? [...MESSAGE_HEAD, 'headers'] : MESSAGE_HEAD, outcome.views.map((v) => headerRow(v, now, flags.headers))))
        // On a terminal each message's metadata follows the table, readable; piped it was a column.
        if (flags.headers && isTerminal()) {
          for (const view of outcome.views) out.line(`#${view.message.position ?? ''} ${view.id ?? ''}\n${JSON.stringify(view.message.headers, null, 2)}`)
        }
        await out.flush()
      }
      if (!json) {
        if (skipped > 0) this.logToStderr(`skipped ${skipped} poison message${skipped === 1 ? '' : 's'} that are not JSON envelopes (see them with --raw)`)
        const filtered = selectors.length > 0 ? ` matching ${selectors.map((s) => s.text).join(' and ')} (scanned ${outcome.scanned}${outcome.truncated ? `, stopped at --scan ${flags.scan}` : ''})` : ''
        this.logToStderr(`${args.queue} on ${adapter.displayUrl}: ${depth} waiting; showing ${shown}${filtered}`)
        if (!adapter.capabilities.truePeek && outcome.scanned > 0) {
          this.logToStderr(`note: ${adapter.kind} has no true peek; the ${outcome.scanned} message(s) read ${readTrace(adapter)}`)
        }
      }
      const signal = interrupt.signal()
      if (outcome.interrupted && signal !== undefined) {
        const message = `interrupted (${signal}) after ${shown} message(s): the output is partial`
        if (!json) this.logToStderr(message)
        throw new InterruptedError(message, result, signal)
      }
      return result
    }, {timeoutSeconds: flags.timeout, warn: (message) => this.warn(message)})
  }

  /**
   * --follow: every message waiting, then each new one, as JSONL (--jsonl, --raw) or
   * tab-separated rows, until a signal; it always ends interrupted (130, 143 or 129).
   */
  /**
   * With --registry, the masker that hides the fields it marks x-gdpr-sensitive; none with --unmask.
   * --raw writes bytes as stored, so it cannot mask: refused unless --unmask says so.
   */
  private async masker(flags: {registry?: string; unmask?: boolean; raw?: boolean}): Promise<Masker | undefined> {
    if (flags.registry === undefined) return undefined
    // ajv loads only when a registry is used.
    const {SchemaRegistry} = await import('../lib/schema/registry.js')
    const registry = SchemaRegistry.load(flags.registry)
    if (flags.unmask) {
      this.logToStderr('note: --unmask: the data fields the registry marks x-gdpr-sensitive are shown in clear')
      return undefined
    }
    if (flags.raw) throw new UsageError('--raw writes each message exactly as stored, so it cannot mask the fields --registry marks x-gdpr-sensitive: use --jsonl (masked), or add --unmask')
    const {Masker} = await import('../lib/ops/mask.js')
    return new Masker(registry)
  }

  private async follow(adapter: BrokerAdapter, o: {queue: string; selectors: Selector[]; from?: BrowseFrom; out: OutputWriter; interrupt: StopRequest; raw: boolean; jsonl: boolean; withHeaders: boolean; masker?: Masker}): Promise<PeekResult> {
    const {out, interrupt} = o
    let shown = 0
    let outcome: {scanned: number}
    try {
      if (!o.raw && !o.jsonl) out.line(tsvRow(MESSAGE_HEAD))
      await out.flush()
      outcome = await followQueue(adapter, {queue: o.queue, selectors: o.selectors, validate: true, stopRequested: interrupt.requested, ...(o.from ? {from: o.from} : {})}, (view) => {
        if (o.raw) {
          out.write(view.message.stored ?? view.message.body)
          out.write('\n')
        } else if (o.jsonl) {
          const line = exportLine(view, {withHeaders: o.withHeaders, masker: o.masker})
          if (line === undefined) return
          out.line(line)
        } else {
          out.line(tsvRow(messageRow(view)))
        }
        shown++
      }, () => out.flush())
    } finally {
      interrupt.dispose()
    }
    const signal = interrupt.signal() ?? 'SIGINT'
    const message = `stopped following ${o.queue} on ${adapter.displayUrl} (${signal}): ${shown} message(s) shown, ${outcome.scanned} scanned`
    this.logToStderr(message)
    throw new InterruptedError(message, {queue: o.queue, broker: adapter.displayUrl, scanned: outcome.scanned, shown}, signal)
  }
}

/** A table row; piped with --headers, the native metadata as one compact JSON cell (pure TSV). */
function headerRow(view: MessageView, now: number, headers: boolean): string[] {
  const row = messageRow(view, now)
  return headers && !isTerminal() ? [...row, JSON.stringify(view.message.headers)] : row
}

/** Whether the queue (or log) holds messages beyond the first `scanned` read. */
async function moreWaiting(adapter: BrokerAdapter, queue: string, scanned: number, depth: number, from: BrowseFrom | undefined): Promise<boolean> {
  // A log read from a position is not the waiting count: look for one more record.
  if (from !== undefined) return (await adapter.browse(queue, {limit: 1, offset: scanned, from})).length > 0
  return depth > scanned
}

/** The log position the --from-* / --last flags ask for (log brokers only). */
function logPosition(flags: {'from-beginning'?: boolean; 'from-offset'?: string; 'from-time'?: string; last?: number}): BrowseFrom | undefined {
  if (flags['from-beginning']) return {kind: 'beginning'}
  if (flags.last !== undefined) return {kind: 'last', count: flags.last}
  const offset = flags['from-offset']
  if (offset !== undefined) {
    const match = /^(?:(\d+):)?(\d+)$/.exec(offset.trim())
    if (match === null) throw new UsageError(`--from-offset "${offset}": expected OFFSET or PARTITION:OFFSET`)
    return {kind: 'offset', offset: Number(match[2]), ...(match[1] === undefined ? {} : {partition: Number(match[1])})}
  }
  const time = flags['from-time']
  if (time !== undefined) {
    const at = /^\d+$/.test(time.trim()) ? Number(time.trim()) : Date.parse(time)
    if (!Number.isFinite(at)) throw new UsageError(`--from-time "${time}": expected an ISO 8601 time or Unix milliseconds`)
    return {kind: 'time', at}
  }
  return undefined
}
