/**
 * The embedded queue store's schema and statements (better-sqlite3, synchronous). One table of
 * messages, ordered by an autoincrement id, plus a table of drain sessions so a crashed run's
 * reservations can be found and returned. Every statement here is short: better-sqlite3 blocks
 * the event loop while it runs.
 */
import Database from 'better-sqlite3'

const SCHEMA_VERSION = 1

const SCHEMA = `
CREATE TABLE IF NOT EXISTS drain_sessions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  queue TEXT NOT NULL,
  pid INTEGER NOT NULL,
  host TEXT NOT NULL,
  started_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS drain_sessions_queue ON drain_sessions (queue);
CREATE TABLE IF NOT EXISTS messages (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  queue TEXT NOT NULL,
  body BLOB NOT NULL,
  headers TEXT NOT NULL,
  enqueued_at INTEGER NOT NULL,
  available_at INTEGER NOT NULL,
  reserved_by INTEGER,
  reserved_at INTEGER
);
CREATE INDEX IF NOT EXISTS messages_queue_id ON messages (queue, id);
CREATE INDEX IF NOT EXISTS messages_reserved_by ON messages (reserved_by) WHERE reserved_by IS NOT NULL;
-- Ready messages only, so counting a queue of millions reads this small index, not the rows.
CREATE INDEX IF NOT EXISTS messages_ready ON messages (queue, available_at) WHERE reserved_by IS NULL;
`

export interface MessageRow {
  id: number
  body: Buffer
  headers: string
  enqueued_at: number
}

export interface SessionRow {
  id: number
  queue: string
  pid: number
  host: string
  started_at: number
}

export interface NewRow {
  queue: string
  body: Buffer
  headers: string
  enqueuedAt: number
  availableAt: number
}

export class SqliteStore {
  readonly db: Database.Database
  private readonly statements: ReturnType<typeof prepare>

  constructor(path: string) {
    this.db = new Database(path)
    try {
      this.db.pragma('journal_mode = WAL')
      // Waiting on another bq process's short transaction beats failing with SQLITE_BUSY.
      this.db.pragma('busy_timeout = 5000')
      // FULL: a publish that resolved survives a power loss, as the adapter contract promises.
      this.db.pragma('synchronous = FULL')
      this.db.transaction(() => {
        const version = this.db.pragma('user_version', {simple: true}) as number
        if (version > SCHEMA_VERSION) throw new Error(`the queue store has schema version ${version}, newer than this bq understands (${SCHEMA_VERSION})`)
        this.db.exec(SCHEMA)
        this.db.pragma(`user_version = ${SCHEMA_VERSION}`)
      }).immediate()
    } catch (error) {
      this.db.close()
      throw error
    }
    this.statements = prepare(this.db)
  }

  /** Runs `fn` in an IMMEDIATE transaction (takes the write lock up front, so no upgrade deadlock). */
  write<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate()
  }

  insert(row: NewRow): void {
    this.statements.insert.run(row.queue, row.body, row.headers, row.enqueuedAt, row.availableAt)
  }

  browse(queue: string, now: number, limit: number, offset: number): MessageRow[] {
    return this.statements.browse.all(queue, now, limit, offset)
  }

  /** Every queue that holds a message (ready, delayed or reserved): a queue exists only through its messages. */
  queues(): string[] {
    return this.statements.queues.all().map((row) => row.queue)
  }

  count(queue: string, now: number): number {
    return this.statements.count.get(queue, now)?.n ?? 0
  }

  lastReadyId(queue: string, now: number): number {
    return this.statements.lastReadyId.get(queue, now)?.id ?? 0
  }

  /** Marks up to `limit` ready messages with id ≤ `maxId` as reserved by `session` (call inside `write`). */
  reserve(queue: string, session: number, maxId: number, readyAt: number, limit: number, now: number): MessageRow[] {
    const rows = this.statements.reservable.all(queue, maxId, readyAt, limit)
    for (const row of rows) {
      if (this.statements.reserve.run(session, now, row.id).changes !== 1) throw new Error(`message ${row.id} was reserved concurrently`)
    }
    return rows
  }

  /** Deletes a message only if `session` holds it; false when it does not. */
  deleteReserved(id: number, session: number): boolean {
    return this.statements.deleteReserved.run(id, session).changes === 1
  }

  /** Returns every message `session` holds to the queue; they keep their ids, so their order. */
  unreserveSession(session: number): number {
    return this.statements.unreserveSession.run(session).changes
  }

  sessionsOf(queue: string): SessionRow[] {
    return this.statements.sessionsOf.all(queue)
  }

  insertSession(queue: string, pid: number, host: string, startedAt: number): number {
    return Number(this.statements.insertSession.run(queue, pid, host, startedAt).lastInsertRowid)
  }

  deleteSession(session: number): void {
    this.statements.deleteSession.run(session)
  }

  close(): void {
    if (this.db.open) this.db.close()
  }
}

function prepare(db: Database.Database) {
  return {
    insert: db.prepare<[string, Buffer, string, number, number]>(
      'INSERT INTO messages (queue, body, headers, enqueued_at, available_at) VALUES (?, ?, ?, ?, ?)',
    ),
    // Reserved and not-yet-available (delayed) messages are not part of the visible queue.
    browse: db.prepare<[string, number, number, number], MessageRow>(
      // INDEXED BY: walk the queue in id order and stop after LIMIT, never sort the whole queue.
      `SELECT id, body, headers, enqueued_at FROM messages INDEXED BY messages_queue_id
       WHERE queue = ? AND reserved_by IS NULL AND available_at <= ?
       ORDER BY id LIMIT ? OFFSET ?`,
    ),
    count: db.prepare<[string, number], {n: number}>(
      'SELECT COUNT(*) AS n FROM messages WHERE queue = ? AND reserved_by IS NULL AND available_at <= ?',
    ),
    lastReadyId: db.prepare<[string, number], {id: number | null}>(
      'SELECT MAX(id) AS id FROM messages WHERE queue = ? AND reserved_by IS NULL AND available_at <= ?',
    ),
    reservable: db.prepare<[string, number, number, number], MessageRow>(
      `SELECT id, body, headers, enqueued_at FROM messages INDEXED BY messages_queue_id
       WHERE queue = ? AND reserved_by IS NULL AND id <= ? AND available_at <= ?
       ORDER BY id LIMIT ?`,
    ),
    reserve: db.prepare<[number, number, number]>('UPDATE messages SET reserved_by = ?, reserved_at = ? WHERE id = ? AND reserved_by IS NULL'),
    deleteReserved: db.prepare<[number, number]>('DELETE FROM messages WHERE id = ? AND reserved_by = ?'),
    unreserveSession: db.prepare<[number]>('UPDATE messages SET reserved_by = NULL, reserved_at = NULL WHERE reserved_by = ?'),
    sessionsOf: db.prepare<[string], SessionRow>('SELECT id, queue, pid, host, started_at FROM drain_sessions WHERE queue = ? ORDER BY id'),
    insertSession: db.prepare<[string, number, string, number]>('INSERT INTO drain_sessions (queue, pid, host, started_at) VALUES (?, ?, ?, ?)'),
    deleteSession: db.prepare<[number]>('DELETE FROM drain_sessions WHERE id = ?'),
    // Reads the (queue, id) index only: one step per queue name, not per message.
    queues: db.prepare<[], {queue: string}>('SELECT DISTINCT queue FROM messages INDEXED BY messages_queue_id ORDER BY queue'),
  }
}
