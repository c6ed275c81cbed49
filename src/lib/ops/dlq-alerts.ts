import type {DlqSummary} from './dlq-list.js'

/** The thresholds of `bq dlq ls` for cron and CI: an alert fires past either. */
export interface DlqThresholds {
  /** More messages than this in one DLQ. */
  failAbove?: number
  /** A dead letter older than this (ms), by its dead_letter.failed_at. */
  maxAgeMs?: number
}

export interface DlqAlert {
  dlq: string
  rule: 'fail-above' | 'max-age'
  message: string
}

export interface AlertCheck {
  alerts: DlqAlert[]
  /** DLQs whose age could not be checked (nothing was read), each with why. */
  unchecked: Array<{dlq: string; reason: string}>
}

export function checkThresholds(summaries: DlqSummary[], thresholds: DlqThresholds, now: number): AlertCheck {
  const alerts: DlqAlert[] = []
  const unchecked: AlertCheck['unchecked'] = []
  for (const s of summaries) {
    if (thresholds.failAbove !== undefined && s.depth > thresholds.failAbove) {
      alerts.push({dlq: s.dlq, rule: 'fail-above', message: `${s.dlq} holds ${s.depth} messages (more than ${thresholds.failAbove})`})
    }
    if (thresholds.maxAgeMs === undefined || s.depth === 0) continue
    if (s.oldest_failed_at === null) {
      unchecked.push({dlq: s.dlq, reason: s.not_sampled ?? 'no sampled message carries dead_letter.failed_at'})
      continue
    }
    const age = now - Date.parse(s.oldest_failed_at)
    if (age > thresholds.maxAgeMs) alerts.push({dlq: s.dlq, rule: 'max-age', message: `${s.dlq} holds a message that failed at ${s.oldest_failed_at} (older than --max-age)`})
  }
  return {alerts, unchecked}
}
