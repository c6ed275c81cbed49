import {Args, Flags} from '@oclif/core'

import type {BrokerAdapter} from '../lib/brokers/adapter.js'
import {openBroker, redactUrl, resolveBrokerUrl} from '../lib/brokers/registry.js'
import {BqCommand} from '../lib/cli/base-command.js'
import {sharedFlags} from '../lib/cli/flags.js'
import {stopOnInterrupt} from '../lib/cli/interrupt.js'
import type {StopRequest} from '../lib/cli/interrupt.js'
import {BqError, InterruptedError, UsageError} from '../lib/errors.js'
import {parseTimeBound} from '../lib/ops/time-window.js'
import {traceBrokers} from '../lib/ops/trace-contexts.js'
import type {TraceBroker} from '../lib/ops/trace-contexts.js'
import {traceTarget} from '../lib/ops/trace-id.js'
import type {TraceTarget} from '../lib/ops/trace-id.js'
import {runsThatMoved} from '../lib/ops/trace-ledger.js'
import type {TraceRun} from '../lib/ops/trace-ledger.js'
import {planTrace} from '../lib/ops/trace-plan.js'
import type {PlannedPlace} from '../lib/ops/trace-plan.js'
import {traceBroker} from '../lib/ops/trace-run.js'
import type {CutShortPlace, PlaceReporter, UnreadPlace} from '../lib/ops/trace-run.js'
import {QueueFilter} from '../lib/ops/trace-sources.js'
import type {TraceSource} from '../lib/ops/trace-sources.js'
import {visible} from '../lib/output/control-chars.js'
import {exportLine} from '../lib/output/message-rows.js'
import {startProgress} from '../lib/output/progress.js'
import {RUN_HEAD, SIGHTING_HEAD, oldestFirst, runRow, sightingJson, sightingRow} from '../lib/output/trace-report.js'
import type {BrokerSighting} from '../lib/output/trace-report.js'
import {renderTable, tsvRow} from '../lib/output/table.js'
import {OutputWriter} from '../lib/output/writer.js'

/** A place, named with its broker, in the report's lists. */
type Named<T> = T & {context: string | null; broker: string}

export interface TraceResult {
  id: string
  /** What the id reads as: `uuid`, `otel` (32 hex) or `other`. */
  form: string
  sightings: Record<string, unknown>[]
  runs: TraceRun[]
  brokers: Array<{context: string | null; broker: string; places_read: number; scanned: number; error: string | null}>
  unread: Array<Named<UnreadPlace>>
  cut_short: Array<Named<CutShortPlace>>
}

export interface TracePlanResult {
  id: string
  brokers: Array<{context: string | null; broker: string; places: PlannedPlace[]; estimated_seconds: number}>
  estimated_seconds: number
}

/** An opened broker and how it is named in the report. */
interface OpenBroker {
  spec: TraceBroker
  adapter: BrokerAdapter
}

export const DEFAULT_MAX_SCAN = 100_000
export const DEFAULT_TRACE_SECONDS = 60

export default class Trace extends BqCommand {
  static override summary = 'Find every copy of a message or a trace: every queue, DLQ, in-flight list and staging place, on one broker or across contexts.'
  static override description = `ID is any of: a trace_id (a UUID or any other string), a 32-hex OpenTelemetry TraceID as Jaeger or Grafana Tempo shows it (mapped back as spec-observability.md says: a UUID's 16 bytes, else the first 16 bytes of the SHA-256 of each candidate's trace_id), or a meta.id.

Where it looks: every queue and DLQ as bq dlq ls finds them (Kafka's SDK retry tiers too; on Kafka the whole retained log), the in-flight elements bq inflight ls reads (Redis <queue>:processing, Laravel's :reserved and :delayed, the embedded store's reserved rows) and bq's own staging list (Redis <queue>:bq-held). --queue narrows it to queues whose name matches a glob (repeatable); where a broker cannot list its queues (Service Bus without its management API), name them with --queue. Reads are side-effect free: where a read would cost a delivery (no true peek: RabbitMQ, SQS) the queue is not read, and is named with why, unless --accept-delivery-cost is given. Trace writes nothing, so protected contexts are read like any other.

Prints, oldest first: broker (context), queue, state (waiting, dead, in flight, staged), position, attempts, the dead_letter reason and exception, age, URN and meta.id; then the recorded runs (bq runs show) that moved, published or deleted these ids. --json prints one object; --jsonl the envelopes, one per line, exactly as bq peek --jsonl writes them (bq replay takes them).

Bounded: at most --max-scan messages per place (default ${DEFAULT_MAX_SCAN.toLocaleString('en-US')}) and --timeout seconds in all (default ${DEFAULT_TRACE_SECONDS}); the report names every place cut short. A body is decoded only when its bytes hold the id (or, for a TraceID of a non-UUID trace_id, when a trace_id in it hashes to it). --plan prints, reading no message, the places a trace would read, their depths, what each read costs and an estimated time.

--follow keeps looking (once a second, free places only) and prints each new copy as it appears, until Ctrl-C.

Exit status: 0 when a copy was found; 1 when none was (one line); 2 for usage errors; 4 when a broker cannot be reached (with several brokers, one that cannot be reached is named instead); 130, 143 or 129 after a signal.`
  static override examples = [
    '<%= config.bin %> trace 4bf92f3577b34da6a3ce929d0e0e4736',
    '<%= config.bin %> trace 0f8fad5b-d9cb-469f-a165-70867728950e --all-contexts',
    '<%= config.bin %> trace 0f8fad5b-d9cb-469f-a165-70867728950e --context staging --context prod --json',
    "<%= config.bin %> trace 7c9e6679-7425-40de-944b-e07fc1f90ae7 --queue 'orders*' --jsonl > copies.jsonl",
    '<%= config.bin %> trace 4bf92f3577b34da6a3ce929d0e0e4736 --plan',
  ]
  static override args = {id: Args.string({description: 'a trace_id, a 32-hex OpenTelemetry TraceID, or a meta.id', required: true})}
  static override flags = {
    queue: Flags.string({char: 'q', description: 'look only in queues whose name matches this glob (*, ?); repeatable. A name without a wildcard is read even where the broker cannot list its queues', multiple: true}),
    'max-scan': Flags.integer({description: 'read at most this many messages of each queue, in-flight list or staging place', default: DEFAULT_MAX_SCAN, min: 1}),
    since: Flags.string({description: 'only copies the broker took at or after this time (ISO 8601, Unix ms, or a duration ago: 30m, 2h, 7d; else meta.created_at); Kafka starts each partition there instead of at the log start'}),
    jsonl: Flags.boolean({description: 'print the envelopes found, one per line, as bq peek --jsonl writes them (bq replay reads them)', exclusive: ['plan']}),
    plan: Flags.boolean({description: 'print the places a trace would read, their depths, costs and an estimated time; read no message'}),
    follow: Flags.boolean({char: 'f', description: 'keep looking and print each new copy as it appears, until Ctrl-C', exclusive: ['plan']}),
    'accept-delivery-cost': Flags.boolean({description: 'also read queues where a read costs a delivery (RabbitMQ: flagged redelivered, a quorum queue counts it; SQS: the receive count rises)'}),
    'all-contexts': Flags.boolean({description: 'read every defined context (bq context list)', exclusive: ['context'], helpGroup: 'BROKER'}),
    broker: sharedFlags.broker,
    context: Flags.string({description: 'read this named context; repeatable, to read several; with --broker, that broker as well (default: $BQ_CONTEXT, else the current context)', multiple: true, helpGroup: 'BROKER'}),
    timeout: Flags.integer({description: `seconds for the whole search (default ${DEFAULT_TRACE_SECONDS}); places not read by then are named as cut short. Also bounds each broker operation`, min: 1, max: 86_400, helpGroup: 'BROKER'}),
  }

  async run(): Promise<TracePlanResult | TraceResult> {
    const {args, flags} = await this.parse(Trace)
    if (flags.jsonl && this.jsonEnabled()) throw new UsageError('--json prints one object, --jsonl one envelope per line: give one of them')
    const target = traceTarget(args.id)
    if (target.text === '') throw new UsageError('the id is empty: give a trace_id, an OpenTelemetry TraceID or a meta.id')
    const specs = traceBrokers(flags)
    const named = specs.filter((s) => s.context !== undefined)
    // Always said, --json or not, as every command acting through a context says it (BqCommand).
    if (named.length > 0) process.stderr.write(`${visible(`bq: trace reads context ${named.map((s) => `${s.context}${s.protected ? ' (protected)' : ''}`).join(', ')}`)}\n`)
    const filter = new QueueFilter(flags.queue ?? [])
    const seconds = flags.timeout ?? DEFAULT_TRACE_SECONDS
    const opened = await this.openAll(specs, flags.timeout)
    try {
      if (flags.plan) return await this.plan(target, opened, {filter, maxScan: flags['max-scan'], acceptDeliveryCost: flags['accept-delivery-cost']})
      const interrupt = stopOnInterrupt()
      try {
        const since = flags.since === undefined ? undefined : parseTimeBound(flags.since, '--since', Date.now())
        const request = {target, filter, since, maxScan: flags['max-scan'], deadline: Date.now() + seconds * 1000, acceptDeliveryCost: flags['accept-delivery-cost'], stopRequested: interrupt.requested}
        if (flags.follow) return await this.follow(target, opened, {...request, acceptDeliveryCost: false}, interrupt, flags.jsonl)
        return await this.traceOnce(target, opened, request, interrupt, flags.jsonl)
      } finally {
        interrupt.dispose()
      }
    } finally {
      await Promise.all(opened.map((o) => ('adapter' in o ? o.adapter.close().catch(() => undefined) : undefined)))
    }
  }

  /** Opens every broker; with several, one that cannot be opened is left out and named (a lone one fails the run). */
  private async openAll(specs: TraceBroker[], timeoutSeconds: number | undefined): Promise<Array<OpenBroker | {spec: TraceBroker; error: BqError | Error}>> {
    const warn = (message: string) => this.warn(message)
    const results = await Promise.allSettled(specs.map((spec) => openBroker(resolveBrokerUrl(spec.url), {timeoutSeconds, warn})))
    if (specs.length === 1 && results[0].status === 'rejected') throw results[0].reason
    return results.map((r, i) => (r.status === 'fulfilled' ? {spec: specs[i], adapter: r.value} : {spec: specs[i], error: r.reason as Error}))
  }

  private async plan(target: TraceTarget, opened: Array<OpenBroker | {spec: TraceBroker; error: Error}>, options: {filter: QueueFilter; maxScan: number; acceptDeliveryCost: boolean}): Promise<TracePlanResult> {
    const brokers: TracePlanResult['brokers'] = []
    for (const o of opened) {
      if (!('adapter' in o)) {
        this.warn(`${o.spec.context ?? 'broker'}: ${o.error.message}`)
        continue
      }
      const planned = await planTrace(o.adapter, options)
      brokers.push({context: o.spec.context ?? null, broker: o.adapter.displayUrl, ...planned})
    }
    const result: TracePlanResult = {id: target.text, brokers, estimated_seconds: Math.round(brokers.reduce((sum, b) => sum + b.estimated_seconds, 0) * 10) / 10}
    if (!this.jsonEnabled()) {
      const rows = brokers.flatMap((b) => b.places.map((p) => [b.context ?? b.broker, p.queue, p.state, p.depth === null ? '?' : String(p.depth), p.would_read === null ? '?' : String(p.would_read), p.cost, p.read ? 'yes' : 'no']))
      this.log(rows.length === 0 ? 'no queues to read' : await renderTable(['broker', 'queue', 'state', 'depth', 'would read', 'cost', 'read'], rows))
      this.logToStderr(`estimated time: about ${result.estimated_seconds} s; no message was read for this plan`)
    }
    return result
  }

  private async scanAll(target: TraceTarget, opened: Array<OpenBroker | {spec: TraceBroker; error: Error}>, request: Parameters<typeof traceBroker>[1], quiet: boolean): Promise<{sightings: BrokerSighting[]; brokers: TraceResult['brokers']; unread: TraceResult['unread']; cutShort: TraceResult['cut_short']}> {
    const sightings: BrokerSighting[] = []
    const brokers: TraceResult['brokers'] = []
    const unread: TraceResult['unread'] = []
    const cutShort: TraceResult['cut_short'] = []
    const one = async (o: OpenBroker | {spec: TraceBroker; error: Error}) => {
      const context = o.spec.context ?? null
      if (!('adapter' in o)) {
        const broker = o.spec.url === undefined ? '(default broker)' : redactUrl(o.spec.url)
        brokers.push({context, broker, places_read: 0, scanned: 0, error: o.error.message})
        unread.push({context, broker, queue: '*', state: '*', why: o.error.message})
        return
      }
      const broker = o.adapter.displayUrl
      try {
        const found = await traceBroker(o.adapter, {...request, onPlace: quiet ? undefined : this.progressFor(o.spec.context ?? broker)})
        for (const s of found.sightings) sightings.push({...s, broker, ...(o.spec.context === undefined ? {} : {context: o.spec.context})})
        brokers.push({context, broker, places_read: found.placesRead, scanned: found.scanned, error: null})
        unread.push(...found.unread.map((u) => ({...u, context, broker})))
        cutShort.push(...found.cutShort.map((c) => ({...c, context, broker})))
      } catch (error) {
        if (opened.length === 1) throw error
        const message = (error as Error).message
        brokers.push({context, broker, places_read: 0, scanned: 0, error: message})
        unread.push({context, broker, queue: '*', state: '*', why: message})
      }
    }
    // A terminal shows one progress line at a time: brokers one after the other there, else together.
    if (quiet) await Promise.all(opened.map(one))
    else for (const o of opened) await one(o)
    return {sightings: oldestFirst(sightings), brokers, unread, cutShort}
  }

  /** A progress line per place on a terminal (nothing elsewhere, nothing under --json). */
  private progressFor(broker: string): (source: TraceSource) => PlaceReporter {
    return (source) => {
      const progress = startProgress({unit: `read in ${source.queue} (${source.state}) on ${broker}`, json: this.jsonEnabled()})
      return {read: (n) => progress.update(n), done: () => progress.stop()}
    }
  }

  private async traceOnce(target: TraceTarget, opened: Array<OpenBroker | {spec: TraceBroker; error: Error}>, request: Parameters<typeof traceBroker>[1], interrupt: StopRequest, jsonl: boolean): Promise<TraceResult> {
    const quiet = this.jsonEnabled() || !process.stderr.isTTY
    const {sightings, brokers, unread, cutShort} = await this.scanAll(target, opened, request, quiet)
    const now = Date.now()
    const runs = runsThatMoved([...new Set(sightings.flatMap((s) => (s.view.id === undefined ? [] : [s.view.id])))])
    const result: TraceResult = {id: target.text, form: target.form, sightings: sightings.map((s) => sightingJson(s, now)), runs, brokers, unread, cut_short: cutShort}
    const json = this.jsonEnabled()
    if (!json) await this.print(sightings, runs, jsonl, now)
    // Nothing found is one line (notFoundLine names what was not read); --json has the lists.
    if (!json && sightings.length > 0) this.notes(result)
    const signal = interrupt.signal()
    if (signal !== undefined) throw new InterruptedError(`interrupted (${signal}): the search is partial; ${sightings.length} copy(ies) found so far`, result, signal)
    if (sightings.length === 0) throw new BqError(notFoundLine(result), {code: 'not-found', result})
    return result
  }

  private async print(sightings: BrokerSighting[], runs: TraceRun[], jsonl: boolean, now: number): Promise<void> {
    const out = new OutputWriter()
    if (jsonl) {
      let skipped = 0
      for (const s of sightings) {
        const line = exportLine(s.view, {withHeaders: false})
        if (line === undefined) skipped++
        else out.line(line)
        await out.maybeFlush()
      }
      await out.flush()
      if (skipped > 0) this.logToStderr(`skipped ${skipped} poison message(s) that are not JSON envelopes`)
      return
    }
    if (sightings.length > 0) out.line(await renderTable(SIGHTING_HEAD, sightings.map((s) => sightingRow(s, now))))
    if (runs.length > 0) out.line(`\nruns that moved these ids (bq runs show RUN):\n${await renderTable(RUN_HEAD, runs.map(runRow))}`)
    await out.flush()
  }

  /** The places not read and those cut short, on stderr. */
  private notes(result: TraceResult): void {
    for (const u of result.unread) this.logToStderr(`not read: ${u.queue === '*' ? 'the broker' : u.queue} (${u.state === '*' ? '' : `${u.state}, `}${u.context ?? u.broker}): ${u.why}`)
    for (const c of result.cut_short) this.logToStderr(`cut short: ${c.queue} (${c.state}, ${c.context ?? c.broker}) after ${c.scanned} message(s): ${c.why === 'max-scan' ? 'reached --max-scan' : c.why === 'timeout' ? 'reached --timeout' : 'interrupted'}`)
    const scanned = result.brokers.reduce((sum, b) => sum + b.scanned, 0)
    const places = result.brokers.reduce((sum, b) => sum + b.places_read, 0)
    if (result.sightings.length > 0) this.logToStderr(`${result.sightings.length} copy(ies) of ${result.id}; read ${scanned} message(s) in ${places} place(s) on ${result.brokers.length} broker(s)`)
  }

  /**
   * --follow: looks again once a second (free places only) and prints each copy not seen before
   * (by broker, queue, state, meta.id and attempts: a move or a retry is a new sighting), until a signal.
   */
  private async follow(target: TraceTarget, opened: Array<OpenBroker | {spec: TraceBroker; error: Error}>, request: Parameters<typeof traceBroker>[1], interrupt: StopRequest, jsonl: boolean): Promise<TraceResult> {
    if (this.jsonEnabled()) throw new UsageError('--follow never ends, so it cannot print one JSON object at the end: use --follow --jsonl')
    const out = new OutputWriter()
    const seen = new Set<string>()
    let shown = 0
    if (!jsonl) out.line(tsvRow(SIGHTING_HEAD))
    await out.flush()
    while (!interrupt.requested()) {
      const {sightings} = await this.scanAll(target, opened, {...request, deadline: Date.now() + 3_600_000}, true)
      const now = Date.now()
      for (const s of sightings) {
        const key = JSON.stringify([s.context ?? s.broker, s.source.queue, s.source.state, s.view.id ?? s.view.message.position, s.view.attempts])
        if (seen.has(key)) continue
        seen.add(key)
        shown++
        if (!jsonl) out.line(tsvRow(sightingRow(s, now)))
        else {
          const line = exportLine(s.view, {withHeaders: false})
          if (line !== undefined) out.line(line)
        }
      }
      await out.flush()
      const until = Date.now() + 1000
      while (Date.now() < until && !interrupt.requested()) await new Promise((resolve) => setTimeout(resolve, 50))
    }
    const signal = interrupt.signal() ?? 'SIGINT'
    const message = `stopped following ${target.text} (${signal}): ${shown} sighting(s) shown`
    this.logToStderr(message)
    throw new InterruptedError(message, {id: target.text, shown}, signal)
  }
}

/** The one line of a trace that found nothing: what was read, and what was not. */
function notFoundLine(result: TraceResult): string {
  const scanned = result.brokers.reduce((sum, b) => sum + b.scanned, 0)
  const places = result.brokers.reduce((sum, b) => sum + b.places_read, 0)
  const where = result.brokers.map((b) => b.context ?? b.broker).join(', ')
  const missed = [
    result.unread.length > 0 ? `${result.unread.length} place(s) not read (${result.unread.slice(0, 3).map((u) => u.queue).join(', ')}${result.unread.length > 3 ? ', …' : ''})` : '',
    result.cut_short.length > 0 ? `${result.cut_short.length} cut short` : '',
  ].filter((s) => s !== '')
  return `no copy of ${result.id} on ${where}: read ${scanned} message(s) in ${places} place(s)${missed.length > 0 ? `; ${missed.join(', ')}` : ''}`
}
