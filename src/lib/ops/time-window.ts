import {UsageError} from '../errors.js'
import type {Selector} from './selector.js'
import type {MessageView} from './message-view.js'

/**
 * `--since` / `--until`: a window on one time of each message, given as an absolute time (ISO
 * 8601, or Unix milliseconds) or as a duration meaning "that long ago" (`90s`, `30m`, `2h`,
 * `7d`, `1w`, or several: `1h30m`). `--since` is inclusive, `--until` exclusive. A message
 * without the time the window is on never matches.
 */

/** Which time of a message a window is on. */
export type TimeBasis =
  /** dead_letter.failed_at (or what a native DLQ recorded): DLQ commands. */
  | 'failed_at'
  /** The broker's enqueue time, else meta.created_at: reading a queue. */
  | 'enqueued'
  /** dead_letter.failed_at when the envelope has one, else meta.created_at: a file of envelopes. */
  | 'recorded'

export interface TimeWindow {
  /** Unix ms, inclusive. */
  since?: number
  /** Unix ms, exclusive. */
  until?: number
}

const UNIT_MS: Record<string, number> = {ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000}
const DURATION = /^(?:\d+(?:ms|s|m|h|d|w))+$/
const DURATION_PART = /(\d+)(ms|s|m|h|d|w)/g
// An ISO 8601 date, optionally with a time: Date.parse alone would also take "1", "May 3" and the like.
const ISO_TIME = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/i

/** Unix ms of a `--since`/`--until` value; `now` anchors durations. */
export function parseTimeBound(text: string, flag: string, now: number): number {
  const value = text.trim()
  if (DURATION.test(value)) {
    let ms = 0
    for (const [, amount, unit] of value.matchAll(DURATION_PART)) ms += Number(amount) * UNIT_MS[unit]
    return now - ms
  }
  if (/^\d{10,}$/.test(value)) return Number(value)
  const at = ISO_TIME.test(value) ? Date.parse(value) : Number.NaN
  if (!Number.isFinite(at)) throw new UsageError(`--${flag} "${text}": expected an ISO 8601 time (2026-11-30T08:00:00Z), Unix milliseconds, or a duration ago (30m, 2h, 7d, 1h30m)`)
  return at
}

/** The window the flags ask for; undefined when neither is given. */
export function parseTimeWindow(flags: {since?: string; until?: string}, now = Date.now()): TimeWindow | undefined {
  if (flags.since === undefined && flags.until === undefined) return undefined
  const window: TimeWindow = {}
  if (flags.since !== undefined) window.since = parseTimeBound(flags.since, 'since', now)
  if (flags.until !== undefined) window.until = parseTimeBound(flags.until, 'until', now)
  if (window.since !== undefined && window.until !== undefined && window.since >= window.until) {
    throw new UsageError(`--since ${flags.since} is not before --until ${flags.until}: no message could match`)
  }
  return window
}

/** The time of a message a window on `basis` looks at, in Unix ms. */
export function messageTime(view: MessageView, basis: TimeBasis): number | undefined {
  switch (basis) {
    case 'failed_at': return view.deadLetter?.failedAt
    case 'enqueued': return view.message.enqueuedAt ?? view.createdAt
    case 'recorded': return view.deadLetter?.failedAt ?? view.createdAt
  }
}

/** A selector keeping the messages whose time on `basis` falls in the window. */
export function windowSelector(window: TimeWindow, basis: TimeBasis): Selector {
  const parts = [window.since === undefined ? '' : `since ${new Date(window.since).toISOString()}`, window.until === undefined ? '' : `until ${new Date(window.until).toISOString()}`]
  const field = basis === 'failed_at' ? 'failed_at' : basis === 'enqueued' ? 'enqueued' : 'failed_at/created_at'
  return {
    text: `${field} ${parts.filter(Boolean).join(' ')}`,
    matches: (view) => {
      const at = messageTime(view, basis)
      if (at === undefined || !Number.isFinite(at)) return false
      return (window.since === undefined || at >= window.since) && (window.until === undefined || at < window.until)
    },
  }
}
