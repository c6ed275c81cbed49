/**
 * The hold rules a `dlq redrive` builds from its flags (--max-redrives, --registry --only-passing)
 * and the one line it says afterwards about messages redriven before.
 */
import {describeTimes, openRedriveHistory} from '../ledger/redrive-history.js'
import {LoopGuard, holdAll, onlyPassing} from '../ops/hold.js'
import {timesList} from '../ops/inspect.js'
import type {HoldOutcome, HoldRule} from '../ops/redrive-types.js'
import {UsageError} from '../errors.js'

export interface RedriveHolds {
  hold?: HoldRule
  outcomes: HoldOutcome[]
  guard: LoopGuard
  /** The one line about messages the run selected that were redriven before (undefined when none). */
  note(): string | undefined
  close(): void
}

export async function redriveHolds(flags: {'max-redrives'?: number; registry?: string; 'only-passing'?: boolean}, warn: (text: string) => void): Promise<RedriveHolds> {
  if (flags['only-passing'] && flags.registry === undefined) throw new UsageError('--only-passing needs --registry (the schemas the messages must pass)')
  // ajv loads only when a registry is used.
  const registry = flags.registry === undefined ? undefined : (await import('../schema/registry.js')).SchemaRegistry.load(flags.registry)
  const history = openRedriveHistory(warn)
  const max = flags['max-redrives']
  const guard = new LoopGuard(history, max)
  const passing = registry !== undefined && flags['only-passing'] ? onlyPassing(registry) : undefined
  const outcomes: HoldOutcome[] = [...(max === undefined ? [] : ['looping' as const]), ...(passing === undefined ? [] : ['still_invalid' as const])]
  return {
    hold: holdAll([guard.rule, passing]),
    outcomes,
    guard,
    note: () => {
      if (guard.redrivenBefore === 0) return undefined
      const hint = max === undefined ? '; --max-redrives K leaves those redriven K times on the DLQ' : ''
      return `${guard.redrivenBefore} selected message(s) had been redriven before (${describeTimes(timesList(guard.before))}), as this ledger recorded${hint}`
    },
    close: () => history.close(),
  }
}
