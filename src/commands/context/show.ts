import {Args} from '@oclif/core'

import {defaultBrokerUrl} from '../../lib/brokers/default-url.js'
import {BqCommand} from '../../lib/cli/base-command.js'
import {describePasswordRef, readPassword} from '../../lib/contexts/secret.js'
import {readContexts} from '../../lib/contexts/store.js'
import type {Context} from '../../lib/contexts/store.js'
import {UsageError} from '../../lib/errors.js'

interface Shown extends Context {
  name: string
  current: boolean
  /** Whether the referenced password can be read now (never the password). */
  password_available?: boolean
  /** What a command without --broker/--context acts on now, when it is not this context. */
  overridden_by?: string
}

export default class ContextShow extends BqCommand {
  static override summary = 'Show a context (default: the one commands use now: $BQ_CONTEXT, else the current one).'
  static override examples = ['<%= config.bin %> context show', '<%= config.bin %> context show prod --json']
  static override args = {name: Args.string({description: 'the context to show'})}

  async run(): Promise<Shown | {name: null; broker: string}> {
    const {args} = await this.parse(ContextShow)
    const store = readContexts()
    const envContext = process.env.BQ_CONTEXT?.trim() || undefined
    const envBroker = process.env.BQ_BROKER?.trim() || undefined
    const name = args.name ?? envContext ?? store.current
    if (name === undefined) {
      // No context in play: say what commands use instead (no secret: a $BQ_BROKER is not printed).
      const broker = envBroker === undefined ? defaultBrokerUrl() : '$BQ_BROKER'
      if (!this.jsonEnabled()) this.log(`no context in use: commands act on ${broker} unless given --broker or --context`)
      return {name: null, broker}
    }
    const context = store.contexts[name]
    if (context === undefined) throw new UsageError(`no context named "${name}"${args.name === undefined && envContext !== undefined ? ' (from $BQ_CONTEXT)' : ''}; bq context list shows the defined ones`)
    const shown: Shown = {name, current: name === store.current, ...context}
    if (context.password !== undefined) shown.password_available = passwordAvailable(name, context.password)
    if (args.name === undefined && envContext === undefined && envBroker !== undefined) shown.overridden_by = '$BQ_BROKER'
    if (!this.jsonEnabled()) {
      const lines = [
        `context   ${name}${shown.current ? ' (current)' : ''}`,
        `broker    ${context.broker}`,
        `protected ${context.protected ? 'yes' : 'no'}`,
        `password  ${describePasswordRef(context.password)}${shown.password_available === false ? ' (not available now)' : ''}`,
      ]
      if (shown.overridden_by) lines.push(`note      $BQ_BROKER is set and takes precedence over the current context`)
      this.log(lines.join('\n'))
    }
    return shown
  }
}

function passwordAvailable(name: string, ref: NonNullable<Context['password']>): boolean {
  try {
    readPassword(name, ref)
    return true
  } catch {
    return false
  }
}
