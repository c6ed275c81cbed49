import {Args, Command} from '@oclif/core'

import {sharedFlags} from '../lib/cli/flags.js'
import {withBroker} from '../lib/cli/broker.js'
import {chooseBroker} from '../lib/contexts/resolve.js'

/** A completion waits no longer than this for the broker (a shell's Tab must not hang). */
const COMPLETION_TIMEOUT_SECONDS = 3

/**
 * The queue names of the broker a command line points at, one per line, for shell completion
 * of `<queue>` (docs/contexts-and-completion.md has the bash and zsh snippets; the autocomplete
 * plugin completes only commands and flags). Hidden, and silent: a Tab must never print an error
 * into the operator's command line, so every failure prints nothing and exits 0. It extends
 * oclif's Command rather than BqCommand for that reason: no context line on stderr, no JSON
 * envelope, no exit codes.
 */
export default class CompleteQueues extends Command {
  static override hidden = true
  static override summary = 'Print the queue names of the broker, one per line, for shell completion (silent on errors).'
  static override args = {prefix: Args.string({description: 'print only the names that start with this'})}
  static override flags = {
    broker: sharedFlags.broker,
    context: sharedFlags.context,
    timeout: sharedFlags.timeout,
  }

  async run(): Promise<void> {
    try {
      const {args, flags} = await this.parse(CompleteQueues)
      // The same broker the completed command would act on: --broker, --context, $BQ_BROKER, $BQ_CONTEXT, the current context.
      const url = chooseBroker(flags).url ?? flags.broker
      const listed = await withBroker(url, (adapter) => adapter.listQueues(), {timeoutSeconds: flags.timeout ?? COMPLETION_TIMEOUT_SECONDS})
      const names = [...new Set(listed.map((entry) => entry.queue))].filter((name) => name.startsWith(args.prefix ?? '')).sort()
      if (names.length > 0) process.stdout.write(`${names.join('\n')}\n`)
    } catch {
      // Nothing to offer: the shell falls back to no completion.
    }
  }
}
