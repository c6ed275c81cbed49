import type {RedriveItem, RedriveReport} from '../ops/redrive-types.js'
import {visible} from './control-chars.js'
import type {OutputWriter} from './writer.js'

/** Human lines for redrive and replay: one per message (when asked), then the counts. */

const LABEL: Record<RedriveItem['outcome'], string> = {
  redriven: 'moved',
  would_redrive: 'would move',
  skipped: 'skipped',
  poison: 'poison (left)',
  failed: 'FAILED',
  looping: 'looping (left)',
  still_invalid: 'still invalid (left)',
  returned: 'returned (left)',
}

/** Labels a run names differently (a purge's `purged`, a copy's `copied`). */
export type OutcomeLabels = Partial<Record<RedriveItem['outcome'], string>>

export function itemLine(item: RedriveItem, labels: OutcomeLabels = {}): string {
  // Ids, URNs, reasons and errors come from message bodies: no raw control character reaches the line.
  const arrow = item.target ? ` -> ${visible(item.target)}` : ''
  const why = item.error ? `  (${visible(item.error)})` : ''
  // A dry run's sample of what would be sent (--patch): the bytes, indented on the next line.
  const sample = item.envelope === undefined ? '' : `\n    ${item.envelope}`
  return [labels[item.outcome] ?? LABEL[item.outcome], item.id ?? '-', item.urn ?? '-', item.reason ? `reason=${item.reason}` : ''].filter(Boolean).map(visible).join('\t') + arrow + why + sample
}

export function summaryLine(report: RedriveReport, verb: string): string {
  const c = report.counts
  const parts = report.dry_run ? [`${c.would_redrive} would be ${verb}`] : [`${c.redriven} ${verb}`]
  parts.push(`${c.skipped} not selected`, `${c.poison} poison`, `${c.failed} failed`)
  // Held back on purpose: named only when the run could hold any.
  if (c.looping !== undefined) parts.push(`${c.looping} looping`)
  if (c.still_invalid !== undefined) parts.push(`${c.still_invalid} still invalid`)
  if (c.returned !== undefined) parts.push(`${c.returned} returned earlier`)
  const stop = report.stopped_early ? `; stopped early: ${report.stop_reason}` : ''
  return `${report.dry_run ? 'dry run: ' : ''}${c.examined} examined: ${parts.join(', ')}${stop}`
}

/**
 * Why messages failed, for a run printed without --list: one line per reason, most frequent
 * first, at most `max`, so "3 failed" in the summary is never left unexplained.
 */
export function failureLines(reasons: Map<string, number>, max = 3): string[] {
  const ranked = [...reasons].sort((a, b) => b[1] - a[1])
  const lines = ranked.slice(0, max).map(([reason, count]) => `${count} failed: ${reason}`)
  const rest = ranked.slice(max).reduce((sum, [, count]) => sum + count, 0)
  if (rest > 0) lines.push(`${rest} failed for ${ranked.length - max} other reason(s)`)
  if (lines.length > 0) lines.push('--list (or --json) shows each message')
  return lines
}

/** Writes item lines as they come, when listing is on. */
export function itemPrinter(out: OutputWriter, enabled: boolean, labels: OutcomeLabels = {}): (item: RedriveItem) => void {
  return (item) => {
    if (enabled) out.line(itemLine(item, labels))
  }
}
