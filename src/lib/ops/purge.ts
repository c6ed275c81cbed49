import type {BrokerMessage, ReservedMessage} from '../brokers/adapter.js'
import {wrapExportLine} from '../envelope/export-line.js'
import {compactJson} from '../envelope/json-tree.js'
import {describeError} from '../errors.js'
import {matchesAll} from './match.js'
import {viewOf} from './message-view.js'
import type {MessageView} from './message-view.js'
import type {PurgeBackup} from './purge-backup.js'
import {MAX_MESSAGE_BYTES} from './read-messages.js'
import {BatchSizer, DEFAULT_BATCH} from './batch-sizer.js'
import {failedRun} from './failed-run.js'
import {aboutOf, aboutUndecoded} from './plan-batch.js'
import {checkDeliveryCost, planOnly, stoppedOnRequest} from './redrive.js'
import type {About, DrainRunRequest, RedriveCounts, RedriveOutcome, RedriveReport} from './redrive-types.js'

/**
 * The purge engine (`bq dlq purge`), built like the redrive engine: drain a batch, append the
 * selected messages to the backup and fsync it, only then delete them (ack) and release the rest.
 * A purge killed at any moment has deleted nothing that is not on disk in the backup. Each
 * backup line is an export line (`peek --jsonl --with-headers`), so `bq replay --as-is` restores
 * the message byte for byte with its headers; a message that line could not restore exactly
 * (poison, an envelope with insignificant whitespace, one larger than replay reads) is left in place.
 *
 * Outcomes reuse the redrive ones ('redriven' = removed); the command names them for the report.
 */
export interface PurgeRequest extends DrainRunRequest {
  /** Where removed messages are written first; undefined only with an explicit --no-backup. */
  backup?: PurgeBackup
}

/** Why this message is left in place, or its backup line ('' without a backup). */
type Verdict = {keep: RedriveOutcome; about: About; error?: string} | {line: string; about: About}

export async function purge(request: PurgeRequest): Promise<RedriveReport> {
  const counts: RedriveCounts = {examined: 0, redriven: 0, would_redrive: 0, skipped: 0, poison: 0, failed: 0}
  const report: RedriveReport = {dlq: request.dlq, source: request.source.displayUrl, target: request.backup?.path ?? '', dry_run: request.dryRun, counts, stopped_early: false}
  const emit = (about: About, outcome: RedriveOutcome, error?: string) => {
    counts[outcome] = (counts[outcome] ?? 0) + 1
    request.onItem?.({...about, target: null, outcome, ...(error === undefined ? {} : {error})})
  }
  await checkDeliveryCost(request, 'purge')
  const judge = (message: BrokerMessage): Verdict => verdictOf(message, request)

  if (request.dryRun) {
    try {
      const stopped = await planOnly(request, (message) => {
        counts.examined++
        const verdict = judge(message)
        if ('keep' in verdict) emit(verdict.about, verdict.keep, verdict.error)
        else emit(verdict.about, 'would_redrive')
      })
      if (stopped) stoppedOnRequest(report)
    } catch (error) {
      throw failedRun(error, report)
    }
    return report
  }

  const cap = Math.max(1, request.batchSize ?? DEFAULT_BATCH)
  const sizer = new BatchSizer(cap, request.batchSize === undefined ? 1 : cap)
  const session = await request.source.drain(request.dlq, {max: request.max})
  try {
    while (true) {
      // A synchronous store (the embedded one) never yields on its own: give signal handlers a turn.
      await new Promise((resolve) => setImmediate(resolve))
      if (request.stopRequested?.()) {
        report.stopped_early = true
        report.stop_reason = 'interrupted'
        break
      }
      const batch = await session.next(sizer.next())
      if (batch.length === 0) break
      sizer.saw(batch.map((message) => message.body.length))
      counts.examined += batch.length
      const kept: ReservedMessage[] = []
      const doomed: Array<{message: ReservedMessage; about: About; line: string}> = []
      for (const message of batch) {
        const verdict = judge(message)
        if ('keep' in verdict) {
          emit(verdict.about, verdict.keep, verdict.error)
          kept.push(message)
        } else {
          doomed.push({message, about: verdict.about, line: verdict.line})
        }
      }
      if (kept.length > 0) await session.release(kept)
      if (doomed.length === 0) continue
      try {
        // On disk before the first delete of the batch.
        request.backup?.append(doomed.map((entry) => entry.line))
      } catch (error) {
        const reason = `writing the backup failed (${describeError(error)}): left in place`
        for (const entry of doomed) emit(entry.about, 'failed', reason)
        await session.release(doomed.map((entry) => entry.message))
        report.stopped_early = true
        report.stop_reason = `writing the backup ${request.backup?.path} failed: ${describeError(error)}`
        break
      }
      try {
        await session.ack(doomed.map((entry) => entry.message))
      } catch (error) {
        const where = request.backup ? `in the backup, but ` : ''
        for (const entry of doomed) emit(entry.about, 'failed', `${where}deleting it from the DLQ was not confirmed (${describeError(error)}): it may still be there`)
        report.stopped_early = true
        report.stop_reason = `deleting from ${request.dlq} failed: ${describeError(error)}`
        throw error
      }
      for (const entry of doomed) emit(entry.about, 'redriven')
    }
  } catch (error) {
    throw failedRun(error, report)
  } finally {
    await session.close()
  }
  return report
}

/** Decides one message: left in place (and why), or removed with this backup line. */
function verdictOf(message: BrokerMessage, request: PurgeRequest): Verdict {
  const backup = request.backup !== undefined
  if (backup && message.body.length > MAX_MESSAGE_BYTES) {
    return {keep: 'failed', about: aboutUndecoded(message), error: `the message is larger than the largest line bq replay reads (${MAX_MESSAGE_BYTES / 1024 / 1024} MiB), so its backup could not be restored: left in place`}
  }
  const view = viewOf(message, request.source.binding)
  // Poison has no export line that replay would restore as it was: it is never purged.
  if (!view.envelope) return {keep: 'poison', about: aboutOf(view), error: view.decodeError}
  if (!matchesAll(view, request.selectors)) return {keep: 'skipped', about: aboutOf(view)}
  if (!backup) return {line: '', about: aboutOf(view)}
  return backupLine(view)
}

/** The export line that restores the message exactly, or why there is none. */
function backupLine(view: MessageView): Verdict {
  const envelope = view.envelope!
  const compact = compactJson(envelope.text, envelope.root)
  if (!view.message.body.equals(Buffer.from(compact, 'utf8'))) {
    return {keep: 'failed', about: aboutOf(view), error: 'its body has whitespace (or a byte order mark) outside JSON tokens, which a backup line would not restore byte for byte: left in place'}
  }
  return {line: wrapExportLine(envelope.text, envelope.root, view.message.appHeaders ?? {}, view.message.nativeProperties), about: aboutOf(view)}
}
