import type {MoveResult} from '../cli/move-run.js'
import {BqError, withResult} from '../errors.js'

/**
 * Purge and `redrive --copy` run on the redrive engine's outcomes; their reports name what they
 * did: `purged`/`would_purge`, `copied`/`would_copy` in the counts and each item's outcome,
 * instead of `redriven`/`would_redrive`.
 */
export interface RunNames {
  done: string
  would: string
}

export function renamedRun(result: MoveResult, names: RunNames): Record<string, unknown> {
  const {redriven, would_redrive: would, ...rest} = result.counts
  const counts = {examined: rest.examined, [names.done]: redriven, [names.would]: would, skipped: rest.skipped, poison: rest.poison, failed: rest.failed}
  const rename = (outcome: string) => (outcome === 'redriven' ? names.done : outcome === 'would_redrive' ? names.would : outcome)
  const items = result.items.map((item) => ({...item, outcome: rename(item.outcome)}))
  return {...result, counts, items}
}

/** Runs `work`; a failure that carries a run's report carries it renamed (partial, interrupted, lost broker). */
export async function withRenamedRun<T>(work: () => Promise<T>, rename: (result: MoveResult) => Record<string, unknown>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof BqError && isMoveResult(error.result)) throw withResult(error, rename(error.result))
    throw error
  }
}

function isMoveResult(result: unknown): result is MoveResult {
  return typeof result === 'object' && result !== null && 'counts' in result && 'items' in result
}
