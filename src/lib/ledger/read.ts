import {existsSync} from 'node:fs'

import {BqError, UsageError} from '../errors.js'
import {LedgerStore, ledgerPath} from './store.js'
import type {RunRow} from './store.js'

/** Reading the run ledger for `bq runs`: a missing ledger is an empty one (nothing was recorded yet). */
export function readLedger<T>(read: (store: LedgerStore) => T, empty: T): T {
  const path = ledgerPath()
  if (!existsSync(path)) return empty
  const store = LedgerStore.open(path, {create: false})
  try {
    return read(store)
  } finally {
    store.close()
  }
}

export function listRuns(limit: number): RunRow[] {
  return readLedger((store) => store.list(limit), [])
}

/** A run by id or unique id prefix (as `bq runs list` shows it); a one-line error otherwise. */
export function findRun(idOrPrefix: string): RunRow {
  const found = readLedger((store) => store.find(idOrPrefix), [])
  if (found.length === 0) throw new BqError(`no run ${idOrPrefix} in the run ledger ${ledgerPath()} (bq runs list shows the recorded runs)`, {code: 'run-not-found'})
  if (found.length > 1 && found[0].id !== idOrPrefix) throw new UsageError(`"${idOrPrefix}" is the start of more than one run id: give more of it`)
  return found[0]
}
