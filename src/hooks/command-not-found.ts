/**
 * `bq peak`: an unknown command. @oclif/plugin-not-found asks "Did you mean peek?" and runs the
 * answer, but only on a terminal; elsewhere it prints no suggestion and exits 127. bq wraps it
 * rather than registering it as a plugin (its hook would run beside this one): on a terminal the
 * plugin asks, off one bq prints the suggestion in one line; a usage error exits 2 either way.
 */
import {toConfiguredId} from '@oclif/core'
import type {Hook} from '@oclif/core'

const hook: Hook.CommandNotFound = async function (options) {
  if (process.stdin.isTTY && process.stdout.isTTY && !(options.argv ?? []).includes('--json')) {
    const {default: ask} = await import('@oclif/plugin-not-found')
    try {
      return await ask.call(this, options)
    } catch (error) {
      // Declined (or no answer): the plugin's "not found" exit 127 becomes bq's usage error.
      const exit = (error as {oclif?: {exit?: number}}).oclif
      if (exit?.exit === 127) exit.exit = 2
      throw error
    }
  }
  const {config} = options
  const hidden = new Set(config.commands.filter((command) => command.hidden).map((command) => command.id))
  const ids = [...config.commandIDs, ...config.commands.flatMap((command) => command.aliases)].filter((id) => !hidden.has(id))
  const best = closest(options.id, ids)
  // oclif folds the words after an unknown command into its id (`peak orders` → peak:orders).
  const typed = toConfiguredId(best === undefined ? options.id.split(':')[0] : best.typed, config)
  const hint = best === undefined ? '' : `; did you mean ${config.bin} ${toConfiguredId(best.id, config)}?`
  const message = `"${typed}" is not a ${config.bin} command${hint} (${config.bin} help lists them)`
  // Under --json the failure is the one envelope on stdout, as for every command.
  if ((options.argv ?? []).includes('--json')) {
    const {printUsageJson} = await import('../lib/cli/plugin-json.js')
    printUsageJson(message)
  } else {
    process.stderr.write(`Error: ${message}\n`)
  }
  this.exit(2)
}

export default hook

/**
 * The nearest id by edit distance, each compared with as many typed words as it has; near enough
 * to be a typo: at most a third of its length, at least 2.
 */
function closest(target: string, ids: string[]): {id: string; typed: string} | undefined {
  const words = target.split(':')
  let best: {id: string; typed: string; distance: number} | undefined
  for (const id of ids) {
    const typed = words.slice(0, id.split(':').length).join(':')
    const distance = editDistance(typed, id)
    if (best === undefined || distance < best.distance) best = {id, typed, distance}
  }
  return best !== undefined && best.distance <= Math.max(2, Math.floor(best.typed.length / 3)) ? best : undefined
}

/** Levenshtein distance, one row at a time. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({length: b.length + 1}, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1))
    previous = row
  }
  return previous[b.length]
}
