import type {BrokerAdapter, InflightElement, InflightGauge} from '../brokers/adapter.js'
import {UsageError} from '../errors.js'
import {isoTime} from '../output/table.js'
import {messageJson} from '../output/message-rows.js'
import {viewOf} from './message-view.js'
import type {MessageView} from './message-view.js'

/**
 * `bq inflight ls`: what a queue's consumers have taken and not finished, from the broker's own
 * numbers, and the elements themselves where the broker keeps them where bq can read them.
 */

export interface InflightRow {
  element: InflightElement
  view: MessageView
}

export interface InflightListing {
  queue: string
  broker: string
  gauges: InflightGauge[]
  /** The elements read (up to --limit), oldest taken first; empty where the broker shows counts only. */
  rows: InflightRow[]
  countsOnly?: string
  returnsItself?: string
}

export async function listInflight(adapter: BrokerAdapter, queue: string, limit: number): Promise<InflightListing> {
  if (adapter.inflight === undefined) throw new UsageError(`bq inflight ls is not available for ${adapter.kind} yet`, 'unsupported')
  const report = await adapter.inflight(queue, {limit})
  const rows = (report.elements ?? []).map((element) => ({element, view: viewOf(element, adapter.binding)}))
  return {queue, broker: adapter.displayUrl, gauges: report.gauges, rows, countsOnly: report.countsOnly, returnsItself: report.returnsItself}
}

/** The JSON shape of one in-flight element (documented in docs/inflight.md): a message as peek shows it, with where it waits and for how long. */
export function inflightElementJson(row: InflightRow, now: number): Record<string, unknown> {
  const created = row.view.createdAt
  return {
    place: row.element.place,
    age_seconds: created === undefined ? null : Math.max(0, Math.round((now - created) / 1000)),
    expires_at: isoTime(row.element.expiresAt) ?? null,
    due_at: isoTime(row.element.dueAt) ?? null,
    ...messageJson(row.view),
  }
}
