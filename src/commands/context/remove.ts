import {Args} from '@oclif/core'

import {BqCommand} from '../../lib/cli/base-command.js'
import {readContexts, writeContexts} from '../../lib/contexts/store.js'
import {UsageError} from '../../lib/errors.js'

export default class ContextRemove extends BqCommand {
  static override summary = 'Forget a context (the broker and its password are untouched).'
  static override aliases = ['context:rm']
  static override examples = ['<%= config.bin %> context remove staging']
  static override args = {name: Args.string({description: 'the context to remove', required: true})}

  async run(): Promise<{removed: string; current: string | null}> {
    const {args} = await this.parse(ContextRemove)
    const store = readContexts()
    if (store.contexts[args.name] === undefined) throw new UsageError(`no context named "${args.name}"; bq context list shows the defined ones`)
    delete store.contexts[args.name]
    // A current context that no longer exists would make every command fail.
    if (store.current === args.name) delete store.current
    writeContexts(store)
    if (!this.jsonEnabled()) this.log(`context ${args.name} removed`)
    return {removed: args.name, current: store.current ?? null}
  }
}
