/**
 * The guardrails of a protected context (bq context add --protected): a destructive command asks
 * for the queue name to be typed on a terminal, and --yes alone is refused. --yes needs --max N
 * (N > 0) so an unattended run has a known bound; a command without --max refuses --yes outright
 * there, since nothing would bound it.
 */
import type {ContextInUse} from '../contexts/resolve.js'
import {NotConfirmedError} from '../errors.js'
import {confirmByTyping, confirmOrRequireYes} from './confirm.js'

export interface ChangeConfirmation {
  /** The --yes flag. */
  yes: boolean
  /** The --max flag; undefined when the command has none. */
  max?: number
  /** What the operator types on a protected context: the queue the change acts on. */
  typed: string
  context?: ContextInUse
}

/** Asks before a change: as confirmOrRequireYes, and more strictly on a protected context. */
export async function confirmChange(question: string, options: ChangeConfirmation): Promise<void> {
  const {yes, max, typed, context} = options
  if (context === undefined || !context.protected) return confirmOrRequireYes(question, yes)
  const guarded = `context ${context.name} is protected`
  if (yes) {
    if (max === undefined) throw new NotConfirmedError(`${guarded} and this command has no --max to bound an unattended run, so --yes is refused: run it on a terminal and type ${typed}; nothing was changed`, 'protected-context')
    if (max <= 0) throw new NotConfirmedError(`${guarded}: --yes needs --max N (N > 0) to bound what it changes; nothing was changed`, 'protected-context')
    return
  }
  const offTerminal = `${guarded}: not on a terminal, so nothing was changed; run it on a terminal, or add --yes --max N`
  return confirmByTyping(`[context ${context.name}, protected] ${question}`, typed, offTerminal)
}
