import {describeError, withResult} from '../errors.js'
import type {RedriveReport} from './redrive-types.js'

/**
 * A run that ended on an error after it examined messages: the error keeps its code and exit
 * code (a lost broker stays exit 4) and carries the report of what the run did.
 */
export function failedRun(error: unknown, report: RedriveReport): unknown {
  if (report.counts.examined === 0) return error
  if (!report.stopped_early) {
    report.stopped_early = true
    report.stop_reason = describeError(error)
  }
  const doubled = report.possible_duplicates ?? 0
  if (doubled > 0) report.stop_reason += `; ${doubled} message(s) may now be on both the DLQ and their target (at least once: the copy was sent, removing the original was not confirmed), so a next redrive may deliver them twice`
  return withResult(error, report)
}
