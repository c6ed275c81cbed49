/**
 * The loop guard's view of the run ledger: how many recorded redrives moved a meta.id before. The
 * wire cannot say (a redriven message is indistinguishable from a fresh one, attempts reset to 0):
 * only the ledger that recorded the runs can. Runs recorded in another ledger (another machine, a
 * context with its own ledger) are not seen.
 */
import {existsSync} from 'node:fs'

import {describeError} from '../errors.js'
import {LedgerStore, ledgerPath} from './store.js'

export interface RedriveHistory {
  /** How many recorded runs moved this id (0 when none, or when the id is unknown). */
  times(id: string | undefined): number
  close(): void
}

const NONE: RedriveHistory = {times: () => 0, close() {}}

/** Opens the ledger for reading; no ledger yet means no history. A ledger that cannot be read is a warning, and no history. */
export function openRedriveHistory(warn: (text: string) => void): RedriveHistory {
  const path = ledgerPath()
  if (!existsSync(path)) return NONE
  let store: LedgerStore
  try {
    store = LedgerStore.open(path, {create: false})
  } catch (error) {
    warn(`cannot read the run ledger ${path} (${describeError(error)}): earlier redrives are not known`)
    return NONE
  }
  return {
    times: (id) => (id === undefined ? 0 : store.timesRedriven(id)),
    close: () => store.close(),
  }
}

/** "2 once, 1 three times": how often the messages redriven before were, for one line. */
export function describeTimes(byTimes: Array<{times: number; messages: number}>): string {
  const word = (n: number) => (n === 1 ? 'once' : n === 2 ? 'twice' : `${n} times`)
  return byTimes.map(({times, messages}) => `${messages} ${word(times)}`).join(', ')
}
