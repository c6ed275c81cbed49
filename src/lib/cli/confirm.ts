import {NotConfirmedError} from '../errors.js'

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
  const answer = await inquirer.prompt<{proceed: boolean}>([{type: 'confirm', name: 'proceed', message: question, default: false}])
  if (!answer.proceed) throw new NotConfirmedError()
}
