import {InterruptedError, NotConfirmedError} from '../errors.js'
import type {StopSignal} from '../errors.js'

/**
 * Destructive commands ask on a terminal and need --yes elsewhere (scripts, CI, pipes), so a
 * script can never move messages by accident. Returns when confirmed; otherwise throws
 * NotConfirmedError (exit 2, "nothing was changed"): `confirmation-needed` without a terminal,
 * `not-confirmed` when the operator answered no.
 */
export async function confirmOrRequireYes(question: string, yes: boolean): Promise<void> {
  if (yes) return
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    throw new NotConfirmedError(`${question.replace(/\?$/, '')}: not on a terminal, so nothing was changed; add --yes to proceed`, 'confirmation-needed')
  }
  const {default: inquirer} = await import('inquirer')
  let answer: {proceed: boolean}
  try {
    answer = await inquirer.prompt<{proceed: boolean}>([{type: 'confirm', name: 'proceed', message: question, default: false}])
  } catch (error) {
    // Ctrl-C at the prompt: inquirer closes it with ExitPromptError ("User force closed the prompt with …").
    if (error instanceof Error && error.name === 'ExitPromptError') throw new InterruptedError('interrupted at the confirmation prompt: nothing was changed', undefined, promptSignal(error.message))
    throw error
  }
  if (!answer.proceed) throw new NotConfirmedError()
}

/**
 * The stronger question, for a protected context: the operator types `expected` (the queue) to
 * confirm; anything else is a no. Needs a terminal: off one, NotConfirmedError as above.
 */
export async function confirmByTyping(question: string, expected: string, offTerminal: string): Promise<void> {
  if (!process.stdin.isTTY || !process.stdout.isTTY) throw new NotConfirmedError(offTerminal, 'confirmation-needed')
  const {default: inquirer} = await import('inquirer')
  let answer: {typed: string}
  try {
    answer = await inquirer.prompt<{typed: string}>([{type: 'input', name: 'typed', message: `${question} Type ${expected} to confirm:`}])
  } catch (error) {
    if (error instanceof Error && error.name === 'ExitPromptError') throw new InterruptedError('interrupted at the confirmation prompt: nothing was changed', undefined, promptSignal(error.message))
    throw error
  }
  if (answer.typed.trim() !== expected) throw new NotConfirmedError(`not confirmed (typed "${answer.typed.trim()}", not ${expected}): nothing was changed`)
}

/** The signal inquirer names in its message, SIGINT (a Ctrl-C key press names none) otherwise. */
function promptSignal(message: string): StopSignal {
  return /\bSIGTERM\b/.test(message) ? 'SIGTERM' : /\bSIGHUP\b/.test(message) ? 'SIGHUP' : 'SIGINT'
}

/**
 * The redrive question, honest about what will move: the DLQ's depth is known, but which of its
 * messages match --select (and which are poison) is decided only as the run reads them.
 */
export function redriveQuestion(plan: {dlq: string; from: string; depth: number; max: number; selectors: Array<{text: string}>; destination: string; copy?: boolean}): string {
  const {dlq, from, depth, max, selectors, destination} = plan
  const verb = plan.copy ? 'Copy' : 'Redrive'
  const stay = plan.copy ? ', leaving the originals on the DLQ' : ''
  const cap = max > 0 ? Math.min(max, depth) : depth
  if (selectors.length === 0) return `${verb} up to ${cap < depth ? `${cap} of the ${depth}` : depth} message(s) from ${dlq} on ${from} ${destination}${stay}?`
  const most = max > 0 ? ` (at most ${max})` : ''
  return `${dlq} on ${from} holds ${depth} message(s); how many match is decided as they are read. ${verb} those matching ${selectors.map((s) => s.text).join(' and ')}${most} ${destination}${stay}?`
}

/** The purge question: how many may go, from where, and where they are written first (or that they are not). */
export function purgeQuestion(plan: {dlq: string; from: string; depth: number; max: number; selectors: Array<{text: string}>; backup?: string}): string {
  const {dlq, from, depth, max, selectors, backup} = plan
  const first = backup === undefined ? 'with NO backup (--no-backup)' : `after writing them to ${backup}`
  const cap = max > 0 ? Math.min(max, depth) : depth
  if (selectors.length === 0) return `Delete up to ${cap < depth ? `${cap} of the ${depth}` : depth} message(s) from ${dlq} on ${from}, ${first}?`
  const most = max > 0 ? ` (at most ${max})` : ''
  return `${dlq} on ${from} holds ${depth} message(s); how many match is decided as they are read. Delete those matching ${selectors.map((s) => s.text).join(' and ')}${most}, ${first}?`
}

/** The `inflight return` question: how much is in flight, what is selected, and the risk of returning work still being done. */
export function inflightReturnQuestion(plan: {queue: string; from: string; inflight: number; olderThan?: string; selectors: Array<{text: string}>}): string {
  const {queue, from, inflight, olderThan, selectors} = plan
  const which = [olderThan === undefined ? '' : `older than ${olderThan}`, ...selectors.map((s) => s.text)].filter(Boolean)
  const what = which.length === 0 ? `all ${inflight}` : `those ${which.join(' and ')} of the ${inflight}`
  return `Return ${what} in-flight element(s) of ${queue} on ${from} to the head of ${queue} (one a consumer is still working on would be handled twice)?`
}
