import {randomUUID} from 'node:crypto'

import {BODY_ATTEMPTS, type BrokerAdapter, type BrokerMessage, type NativeProperties, type OutgoingMessage} from '../brokers/adapter.js'
import {fieldsOf, resetForRedrive, withNewId} from '../envelope/envelope.js'
import {readExportLine} from '../envelope/export-line.js'
import {readFrame} from '../envelope/frame.js'
import {describeError, refusalOf} from '../errors.js'
import {matchesAll} from './match.js'
import type {Selector} from './selector.js'
import {viewOf} from './message-view.js'
import type {MessageView} from './message-view.js'
import {RateLimiter} from './rate.js'
import {readMessages} from './read-messages.js'
import type {RedriveCounts, RedriveItem, RedriveOutcome, RedriveReport} from './redrive-types.js'

/**
 * `bq replay`: re-publish envelopes from a JSON/JSONL file (a `peek --jsonl` export, a backup)
 * to a queue, without touching where they came from. Streams the file; publishes each chunk's
 * messages with confirmation before reading on.
 */
export interface ReplayRequest {
  file: string
  target: BrokerAdapter
  toQueue?: string
  selectors: Selector[]
  max: number
  rate?: number
  bypass: boolean
  dryRun: boolean
  /** The ledger id of this run, stamped on each copy as `bq-run-id` where the binding has headers. */
  runId?: string
  /** Copy bytes verbatim: no reset, no new id (restoring a backup). */
  asIs: boolean
  /** Mint a fresh meta.id per message, keeping trace_id. */
  newId: boolean
  /**
   * Publish the headers a `--with-headers` export line recorded (export-line.ts) with its message;
   * with `asIs`, also the native properties it recorded (a restore writes them back verbatim).
   */
  restoreHeaders?: boolean
  onItem?: (item: RedriveItem) => void
  stopRequested?: () => boolean
  /** Told once, at the first masked export line refused (so the operator hears of it without --list). */
  warn?: (message: string) => void
}

interface Pending {
  view: MessageView
  outgoing: OutgoingMessage
}

export async function replay(request: ReplayRequest): Promise<RedriveReport> {
  const counts: RedriveCounts = {examined: 0, redriven: 0, would_redrive: 0, skipped: 0, poison: 0, failed: 0}
  const report: RedriveReport = {dlq: request.file, source: request.file, target: request.target.displayUrl, dry_run: request.dryRun, counts, stopped_early: false}
  const limiter = request.rate ? new RateLimiter(request.rate) : undefined
  const emit = (view: MessageView, outcome: RedriveOutcome, target: string | null, error?: string) => {
    counts[outcome] = (counts[outcome] ?? 0) + 1
    request.onItem?.({id: view.id ?? null, trace_id: view.traceId ?? null, urn: view.urn ?? null, reason: view.deadLetter?.reason ?? null, target, outcome, ...(error === undefined ? {} : {error})})
  }
  let warnedMasked = false
  let batch = new Map<string, Pending[]>()
  let planned = 0
  const full = () => request.max > 0 && planned >= request.max

  let warnedForeign = false
  /** A restore (--as-is) writes back the native properties a line recorded, on the broker it recorded them on. */
  const nativeToRestore = (native: NativeProperties | undefined, where: string): {restore?: NativeProperties} => {
    if (!request.asIs || !request.restoreHeaders || native === undefined) return {}
    if (native.broker === request.target.kind) return {restore: native}
    if (!warnedForeign) request.warn?.(`${where}: the native properties recorded on ${native.broker} are not restored on ${request.target.kind}: its messages carry the ${request.target.kind} binding's projection instead`)
    warnedForeign = true
    return {}
  }

  const consider = (body: Buffer, where: string, appHeaders: Record<string, string> | undefined, native?: NativeProperties) => {
    if (full() || report.stopped_early) return
    counts.examined++
    const message: BrokerMessage = {body, headers: {}, native: {}, position: where}
    const view = viewOf(message, BODY_ATTEMPTS)
    // Only what an export line recorded, and only when asked for; none is an absent field, not {}.
    const restored = {
      ...(request.restoreHeaders && appHeaders !== undefined && Object.keys(appHeaders).length > 0 ? {appHeaders} : {}),
      ...nativeToRestore(native, where),
    }
    const stamp = request.runId === undefined ? {} : {runId: request.runId}
    if (!view.envelope) {
      if (request.asIs && request.toQueue) return queue(view, request.toQueue, {body, fields: null, bypass: request.bypass, republish: true, ...restored, ...stamp})
      return emit(view, 'poison', null, `${where}: ${view.decodeError}`)
    }
    if (!matchesAll(view, request.selectors)) return emit(view, 'skipped', null)
    const target = request.toQueue ?? view.deadLetter?.originalQueue ?? view.queue
    if (target === undefined) return emit(view, 'failed', null, `${where}: no queue recorded in the envelope: use --to`)
    let envelope = view.envelope
    if (!request.asIs) {
      if (envelope.node('dead_letter') !== undefined) envelope = resetForRedrive(envelope)
      if (request.newId) envelope = withNewId(envelope, randomUUID())
    }
    const replayed = envelope === view.envelope ? view : {...view, id: envelope.id}
    // A copy keeps its meta.id unless --new-id minted one, so brokers that deduplicate by it must not drop it.
    const republish = request.asIs || !request.newId
    queue(replayed, target, {body: request.asIs ? body : envelope.toBuffer(), fields: fieldsOf(envelope), bypass: request.bypass, republish, ...restored, ...stamp})
  }
  const queue = (view: MessageView, target: string, outgoing: OutgoingMessage) => {
    planned++
    if (request.dryRun) return emit(view, 'would_redrive', target)
    const list = batch.get(target) ?? []
    list.push({view, outgoing})
    batch.set(target, list)
  }
  const flush = async () => {
    const groups = batch
    batch = new Map()
    for (const [target, group] of groups) {
      if (report.stopped_early) {
        for (const entry of group) emit(entry.view, 'failed', target, 'not sent: the run stopped early')
        continue
      }
      await limiter?.take(group.length)
      try {
        await request.target.publish(target, group.map((entry) => entry.outgoing))
        for (const entry of group) emit(entry.view, 'redriven', target)
      } catch (error) {
        const reason = describeError(error)
        for (const entry of group) emit(entry.view, 'failed', target, reason)
        report.stopped_early = true
        report.stop_reason = `publishing to ${target} failed: ${reason}`
        report.stop_refusal ??= refusalOf(error)
      }
    }
    if (request.stopRequested?.() && !report.stopped_early) {
      report.stopped_early = true
      report.stop_reason = 'interrupted'
    }
  }

  await readMessages(
    request.file,
    (message) => {
      const where = `${message.source}:${message.line}`
      if (message.readError || message.text === undefined) {
        counts.examined++
        counts.poison++
        request.onItem?.({id: null, trace_id: null, urn: null, reason: null, target: null, outcome: 'poison', error: `${where}: ${message.readError?.message ?? 'unreadable'}`})
        return
      }
      const line = readExportLine(message.text)
      if (line.kind === 'broken') {
        counts.examined++
        counts.poison++
        request.onItem?.({id: null, trace_id: null, urn: null, reason: null, target: null, outcome: 'poison', error: `${where}: ${line.path}: ${line.message}`})
        return
      }
      // A `--with-headers` export line carries the envelope inside; so does a Redis SDK frame
      // (`peek --raw` of a framed message), whose headers travel like an export's (bq's own
      // names among them are dropped by the target adapter); any other line is the envelope.
      if (line.kind === 'masked') {
        // A masked export's data is not the message's: replaying it would publish the mask. Refused, never published.
        counts.examined++
        counts.failed++
        if (!warnedMasked) request.warn?.(`${where}: masked export lines are not replayed (their x-gdpr-sensitive data fields were replaced); export again with bq peek --unmask to replay them`)
        warnedMasked = true
        const view = viewOf({body: Buffer.from(line.envelope, 'utf8'), headers: {}, native: {}, position: where}, BODY_ATTEMPTS)
        request.onItem?.({id: view.id ?? null, trace_id: view.traceId ?? null, urn: view.urn ?? null, reason: view.deadLetter?.reason ?? null, target: null, outcome: 'failed', error: `${where}: a masked export line (${line.fields.join(', ')} masked): its data is not the message's, so it is not replayed; export again with --unmask to replay it`})
        return
      }
      if (line.kind === 'wrapped') return consider(Buffer.from(line.envelope, 'utf8'), where, line.headers, line.native)
      const frame = readFrame(message.text)
      if (frame.kind === 'frame') return consider(frame.body, where, frame.headers)
      if (frame.kind === 'malformed') {
        counts.examined++
        counts.poison++
        request.onItem?.({id: null, trace_id: null, urn: null, reason: null, target: null, outcome: 'poison', error: `${where}: ${frame.reason}`})
        return
      }
      consider(Buffer.from(message.text, 'utf8'), where, undefined)
    },
    {afterChunk: flush},
  )
  await flush()
  return report
}

/**
 * Why a finished replay is a failure although nothing failed to send: every message it read was
 * poison (a binary file, an endless line, an empty input), so nothing was or would be published.
 * Undefined for any other report.
 */
export function nothingReplayable(report: RedriveReport): string | undefined {
  const c = report.counts
  if (c.poison === 0 || c.poison !== c.examined) return undefined
  const published = report.dry_run ? 'nothing would be published' : 'nothing was published'
  return `${published}: ${c.poison === 1 ? 'the only message' : `all ${c.poison} messages`} read from ${report.source === '-' ? 'stdin' : report.source} ${c.poison === 1 ? 'was' : 'were'} poison (not an envelope; --list shows why)`
}
