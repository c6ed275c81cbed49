/**
 * `bq inflight ls` on the embedded store. A drain reserves a row by writing its session id into
 * it (drain.ts), so what is taken and not finished is right there, readable: the rows reserved by
 * a session, oldest reservation first, then the delayed rows (not yet available), soonest due first.
 */
import type {InflightElement, InflightReport} from '../adapter.js'
import {toBrokerMessage} from './rows.js'
import type {MessageRow, SqliteStore} from './store.js'

interface DelayedRow extends MessageRow {
  available_at: number
}

const RETURNS_ITSELF =
  'the store puts the rows a drain reserved back in their places when the drain ends; those of a drain whose process died stay reserved until the next drain of the queue on the same host ' +
  '(or bq dlq recover <queue> --dlq <queue>) returns them; a reservation never expires by time'

export function sqliteInflight(store: SqliteStore, queue: string, limit: number, now: number): InflightReport {
  const {db} = store
  const reserved = db.prepare<[string], {n: number}>('SELECT COUNT(*) AS n FROM messages WHERE queue = ? AND reserved_by IS NOT NULL').get(queue)?.n ?? 0
  const delayed = db.prepare<[string, number], {n: number}>('SELECT COUNT(*) AS n FROM messages WHERE queue = ? AND reserved_by IS NULL AND available_at > ?').get(queue, now)?.n ?? 0
  const elements: InflightElement[] = []
  if (limit > 0 && reserved > 0) {
    const rows = db
      .prepare<[string, number], MessageRow>('SELECT id, body, headers, enqueued_at FROM messages WHERE queue = ? AND reserved_by IS NOT NULL ORDER BY reserved_at, id LIMIT ?')
      .all(queue, limit)
    for (const row of rows) elements.push({...toBrokerMessage(row), place: 'reserved'})
  }
  if (limit > elements.length && delayed > 0) {
    const rows = db
      .prepare<[string, number, number], DelayedRow>(
        'SELECT id, body, headers, enqueued_at, available_at FROM messages WHERE queue = ? AND reserved_by IS NULL AND available_at > ? ORDER BY available_at, id LIMIT ?',
      )
      .all(queue, now, limit - elements.length)
    for (const row of rows) elements.push({...toBrokerMessage(row), place: 'delayed', dueAt: row.available_at})
  }
  return {
    gauges: [
      {name: 'reserved', value: reserved, help: 'reserved by a drain and neither acknowledged nor returned yet'},
      {name: 'delayed', value: delayed, help: 'published with a delay that has not ended yet'},
    ],
    elements,
    returnsItself: RETURNS_ITSELF,
  }
}
