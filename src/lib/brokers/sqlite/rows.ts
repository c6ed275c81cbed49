/** Conversions between the adapter's messages and the embedded store's rows. */
import {UsageError} from '../../errors.js'
import type {BrokerMessage, OutgoingMessage} from '../adapter.js'
import {appHeadersOf, nativeFromHeaders, parseHeaders, projectHeaders} from './headers.js'
import type {MessageRow, SqliteStore} from './store.js'

export function toBrokerMessage(row: MessageRow): BrokerMessage {
  const headers = parseHeaders(row.headers)
  return {body: row.body, headers, native: nativeFromHeaders(headers), appHeaders: appHeadersOf(headers), enqueuedAt: row.enqueued_at, position: String(row.id)}
}

/** Inserts every message in order (call inside a write transaction, so a batch is all or nothing). */
export function insertAll(store: SqliteStore, queue: string, messages: OutgoingMessage[], now: number): void {
  for (const message of messages) {
    const delay = message.delayMs ?? 0
    if (!Number.isFinite(delay) || delay < 0) throw new UsageError(`delay must be a non-negative number of milliseconds, got ${delay}`)
    store.insert({
      queue,
      body: message.body,
      headers: JSON.stringify(projectHeaders(message)),
      enqueuedAt: now,
      availableAt: now + Math.round(delay),
    })
  }
}
