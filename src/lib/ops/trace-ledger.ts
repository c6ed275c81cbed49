import {existsSync} from 'node:fs'
import {createRequire} from 'node:module'

import type BetterSqlite3 from 'better-sqlite3'

import {ledgerPath} from '../ledger/store.js'

/**
 * The recorded runs (`bq runs show`) that moved, published or deleted one of the given message
 * ids: the redrives, replays and purges a traced message went through. The ledger is opened
 * read-only (trace writes nothing, not even the ledger's table when it is missing).
 */
export interface TraceRun {
  id: string
  started_at: string
  command: string
  broker: string
  source: string | null
  target: string | null
  outcome: string
  /** The traced ids the run recorded, by what happened to them (`moved`, `published`, `deleted`). */
  ids: Record<string, string[]>
}

interface StoredRun {
  id: string
  started_at: number
  command: string
  broker: string
  source: string | null
  target: string | null
  outcome: string
  ids: string
}

/** Oldest run first. A ledger that does not exist (or has no runs table yet) has no runs. */
export function runsThatMoved(messageIds: string[], path = ledgerPath()): TraceRun[] {
  if (messageIds.length === 0 || !existsSync(path)) return []
  const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3
  let db: BetterSqlite3.Database
  try {
    db = new Database(path, {readonly: true, fileMustExist: true})
  } catch {
    return []
  }
  try {
    const hasTable = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'bq_runs'").get() !== undefined
    if (!hasTable) return []
    const wanted = new Set(messageIds)
    const query = db.prepare<[string], StoredRun>("SELECT id, started_at, command, broker, source, target, outcome, ids FROM bq_runs WHERE ids LIKE ? ESCAPE '\\'")
    const runs = new Map<string, TraceRun>()
    for (const messageId of wanted) {
      // The ids column is JSON: the LIKE narrows, the parse decides.
      for (const row of query.all(`%${JSON.stringify(messageId).replace(/[\\%_]/g, '\\$&')}%`)) {
        if (runs.has(row.id)) continue
        const recorded = JSON.parse(row.ids) as Record<string, string[]>
        const ids: Record<string, string[]> = {}
        for (const [what, list] of Object.entries(recorded)) {
          const traced = list.filter((id) => wanted.has(id))
          if (traced.length > 0) ids[what] = traced
        }
        if (Object.keys(ids).length === 0) continue
        runs.set(row.id, {id: row.id, started_at: new Date(row.started_at).toISOString(), command: row.command, broker: row.broker, source: row.source, target: row.target, outcome: row.outcome, ids})
      }
    }
    return [...runs.values()].sort((a, b) => a.started_at.localeCompare(b.started_at))
  } finally {
    db.close()
  }
}
