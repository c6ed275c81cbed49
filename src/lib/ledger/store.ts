/**
 * The run ledger's table, in bq's local state: the embedded store's file
 * (`$XDG_DATA_HOME/bq/queues.db`, or the file $BQ_LEDGER names). Its own table, created on first
 * use, beside the queue store's (whose schema version it leaves alone).
 */
import {mkdirSync} from 'node:fs'
import {createRequire} from 'node:module'
import {dirname, join} from 'node:path'

import type BetterSqlite3 from 'better-sqlite3'

import {dataDir} from '../brokers/default-url.js'

const SCHEMA = `
CREATE TABLE IF NOT EXISTS bq_runs (
  id TEXT PRIMARY KEY,
  started_at INTEGER NOT NULL,
  ended_at INTEGER,
  user TEXT NOT NULL,
  host TEXT NOT NULL,
  command TEXT NOT NULL,
  command_line TEXT NOT NULL,
  broker TEXT NOT NULL,
  target_broker TEXT,
  source TEXT,
  target TEXT,
  selection TEXT NOT NULL,
  reason TEXT,
  outcome TEXT NOT NULL,
  exit_code INTEGER,
  error TEXT,
  counts TEXT,
  ids TEXT
);
CREATE INDEX IF NOT EXISTS bq_runs_started ON bq_runs (started_at);
CREATE TABLE IF NOT EXISTS bq_redriven (
  message_id TEXT NOT NULL,
  run_rowid INTEGER NOT NULL,
  PRIMARY KEY (message_id, run_rowid)
) WITHOUT ROWID;
`

/**
 * bq_redriven is the loop guard's memory (ledger/redrive-history.ts): one row per meta.id a
 * redrive moved, keyed by the id, pointing at the run's rowid (ids only, never bodies). The
 * stages column holds a canary run's stages (JSON), added to ledgers made before it existed.
 */
const ADDED_COLUMNS = [['stages', 'TEXT']] as const

/** A run as stored and as `bq runs` prints it (JSON columns parsed, times ISO). */
export interface RunRow {
  id: string
  started_at: string
  ended_at: string | null
  user: string
  host: string
  command: string
  command_line: string
  broker: string
  target_broker: string | null
  source: string | null
  target: string | null
  selection: Record<string, unknown>
  reason: string | null
  /** `running` until the run ends (a run killed outright stays `running`), then `ok`, `partial`, `interrupted` or `failed`. */
  outcome: string
  exit_code: number | null
  error: string | null
  counts: Record<string, number> | null
  /** Message ids by what happened to them (`moved`, `published`, `deleted`). */
  ids: Record<string, string[]> | null
  /** A canary redrive's stages, as each ended (ops/canary.ts); null for other runs. */
  stages: Array<Record<string, unknown>> | null
}

type StoredRow = Omit<RunRow, 'started_at' | 'ended_at' | 'selection' | 'counts' | 'ids' | 'stages'> & {started_at: number; ended_at: number | null; selection: string; counts: string | null; ids: string | null; stages: string | null}

export interface RunStartRow {
  id: string
  startedAt: number
  user: string
  host: string
  command: string
  commandLine: string
  broker: string
  targetBroker?: string
  source?: string
  target?: string
  selection: Record<string, unknown>
  reason?: string
}

export interface RunEndRow {
  endedAt: number
  outcome: string
  exitCode: number
  error?: string
  counts?: Record<string, number>
  ids?: Record<string, string[]>
}

/** Where the ledger lives: $BQ_LEDGER, else the embedded store's default file. */
export function ledgerPath(env: NodeJS.ProcessEnv = process.env): string {
  return explicitLedger(env) ?? join(dataDir(env), 'bq', 'queues.db')
}

/** $BQ_LEDGER when set (and not empty). */
export function explicitLedger(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const explicit = env.BQ_LEDGER
  return explicit !== undefined && explicit !== '' ? explicit : undefined
}

export class LedgerStore {
  private constructor(private readonly db: BetterSqlite3.Database) {}

  /**
   * `create`: make the file when missing (reading a ledger never does); `createDirectory`: its
   * directory too, for the default place only ($BQ_LEDGER's directory must exist: a recursive
   * mkdir under some paths, /proc among them, never returns on Node 20).
   */
  static open(path: string, options: {create: boolean; createDirectory?: boolean}): LedgerStore {
    const {create, createDirectory = false} = options
    if (create && createDirectory) mkdirSync(dirname(path), {recursive: true})
    // Loaded on first use: every command that records a run carries this module, and most runs of
    // them (help, a broker other than the embedded one) must not pay for the native driver's load.
    const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3
    const db = new Database(path, {fileMustExist: !create})
    try {
      db.pragma('journal_mode = WAL')
      // Short: a busy ledger must not hold up the broker operation (a failed write is a warning).
      db.pragma('busy_timeout = 2000')
      db.exec(SCHEMA)
      const columns = new Set(db.prepare<[], {name: string}>('PRAGMA table_info(bq_runs)').all().map((column) => column.name))
      for (const [name, type] of ADDED_COLUMNS) if (!columns.has(name)) db.exec(`ALTER TABLE bq_runs ADD COLUMN ${name} ${type}`)
    } catch (error) {
      db.close()
      throw error
    }
    return new LedgerStore(db)
  }

  start(row: RunStartRow): void {
    this.db
      .prepare('INSERT INTO bq_runs (id, started_at, user, host, command, command_line, broker, target_broker, source, target, selection, reason, outcome) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
      .run(row.id, row.startedAt, row.user, row.host, row.command, row.commandLine, row.broker, row.targetBroker ?? null, row.source ?? null, row.target ?? null, JSON.stringify(row.selection), row.reason ?? null, 'running')
  }

  end(id: string, row: RunEndRow): void {
    this.db
      .prepare('UPDATE bq_runs SET ended_at = ?, outcome = ?, exit_code = ?, error = ?, counts = ?, ids = ? WHERE id = ?')
      .run(row.endedAt, row.outcome, row.exitCode, row.error ?? null, row.counts === undefined ? null : JSON.stringify(row.counts), row.ids === undefined ? null : JSON.stringify(row.ids), id)
  }

  /** Remembers the meta.ids a redrive run moved (the loop guard's memory); ids already noted for the run are kept once. */
  noteRedriven(runId: string, ids: Iterable<string>): void {
    const run = this.db.prepare<[string], {rowid: number}>('SELECT rowid FROM bq_runs WHERE id = ?').get(runId)
    if (run === undefined) return
    const insert = this.db.prepare('INSERT OR IGNORE INTO bq_redriven (message_id, run_rowid) VALUES (?, ?)')
    this.db.transaction(() => {
      for (const id of ids) insert.run(id, run.rowid)
    })()
  }

  /** How many recorded runs moved this meta.id. */
  timesRedriven(messageId: string): number {
    this.countStatement ??= this.db.prepare<[string], {n: number}>('SELECT COUNT(*) AS n FROM bq_redriven WHERE message_id = ?')
    return this.countStatement.get(messageId)?.n ?? 0
  }

  private countStatement?: BetterSqlite3.Statement<[string], {n: number}>

  /** A running canary's stages so far (bq runs show lists them, also for a run killed outright). */
  saveStages(id: string, stages: Array<Record<string, unknown>>): void {
    this.db.prepare('UPDATE bq_runs SET stages = ? WHERE id = ?').run(JSON.stringify(stages), id)
  }

  /** The newest runs first. */
  list(limit: number): RunRow[] {
    return this.db.prepare<[number], StoredRow>('SELECT * FROM bq_runs ORDER BY started_at DESC, rowid DESC LIMIT ?').all(limit).map(parsed)
  }

  /** A run by its id, or by a unique prefix of it. */
  find(idOrPrefix: string): RunRow[] {
    return this.db.prepare<[string, string], StoredRow>("SELECT * FROM bq_runs WHERE id = ? OR id LIKE ? ESCAPE '\\' ORDER BY started_at DESC LIMIT 2").all(idOrPrefix, `${idOrPrefix.replace(/[\\%_]/g, '\\$&')}%`).map(parsed)
  }

  close(): void {
    this.db.close()
  }
}

function parsed(row: StoredRow): RunRow {
  return {
    ...row,
    started_at: new Date(row.started_at).toISOString(),
    ended_at: row.ended_at === null ? null : new Date(row.ended_at).toISOString(),
    selection: JSON.parse(row.selection) as Record<string, unknown>,
    counts: row.counts === null ? null : (JSON.parse(row.counts) as Record<string, number>),
    ids: row.ids === null ? null : (JSON.parse(row.ids) as Record<string, string[]>),
    stages: row.stages === null || row.stages === undefined ? null : (JSON.parse(row.stages) as Array<Record<string, unknown>>),
  }
}
