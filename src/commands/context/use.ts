import {Args, Flags} from '@oclif/core'

import {BqCommand} from '../../lib/cli/base-command.js'
import {checkContextName, readContexts, writeContexts} from '../../lib/contexts/store.js'
import {UsageError} from '../../lib/errors.js'

export default class ContextUse extends BqCommand {
  static override summary = 'Make a context the current one: commands without --broker, --context, $BQ_BROKER or $BQ_CONTEXT act on it.'
  static override examples = ['<%= config.bin %> context use staging', '<%= config.bin %> context use --none']
  static override args = {name: Args.string({description: 'the context to use'})}
  static override flags = {none: Flags.boolean({description: 'use no context: back to $BQ_BROKER or the embedded store'})}

  async run(): Promise<{current: string | null}> {
    const {args, flags} = await this.parse(ContextUse)
    if (flags.none === (args.name !== undefined)) throw new UsageError('name a context, or give --none (see bq context use --help)')
    const store = readContexts()
    if (flags.none) {
      delete store.current
      writeContexts(store)
      if (!this.jsonEnabled()) this.log('no current context: commands use --broker, $BQ_BROKER or the embedded store')
      return {current: null}
    }
    const name = checkContextName(args.name as string)
    const context = store.contexts[name]
    if (context === undefined) throw new UsageError(`no context named "${name}"; bq context list shows the defined ones`)
    store.current = name
    writeContexts(store)
    if (!this.jsonEnabled()) this.log(`current context: ${name}${context.protected ? ' (protected)' : ''} → ${context.broker}`)
    return {current: name}
  }
}
