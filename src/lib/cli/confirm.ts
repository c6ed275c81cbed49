import {UsageError} from '../errors.js'

/**
 * Destructive commands ask on a terminal and need --yes elsewhere (scripts, CI, pipes), so a
 * script can never move messages by accident.
 */
export async function confirmOrRequireYes(question: string, yes: boolean): Promise<boolean> {
  if (yes) return true
  if (!process.stdin.isTTY || !process.stdout.isTTY) {
    throw new UsageError(`${question.replace(/\?$/, '')}: not on a terminal, so nothing was changed; add --yes to proceed`)
  }
  const {default: inquirer} = await import('inquirer')
  const answer = await inquirer.prompt<{proceed: boolean}>([{type: 'confirm', name: 'proceed', message: question, default: false}])
  return answer.proceed
}
