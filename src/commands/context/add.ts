import {Args, Flags} from '@oclif/core'
import {resolve} from 'node:path'

import {brokerScheme, redactUrl, urlSaysInsecure} from '../../lib/brokers/registry.js'
import {BqCommand} from '../../lib/cli/base-command.js'
import {holdsSecret, takesPassword} from '../../lib/contexts/secret.js'
import {checkContextName, contextsPath, readContexts, writeContexts} from '../../lib/contexts/store.js'
import type {Context} from '../../lib/contexts/store.js'
import {UsageError} from '../../lib/errors.js'

export default class ContextAdd extends BqCommand {
  static override summary = 'Name a broker: bq --context NAME (or bq context use NAME) then acts on it.'
  static override description = `The context is stored in $XDG_CONFIG_HOME/bq/contexts.json (else ~/.config/bq/contexts.json), mode 0600. bq never writes a secret there: a URL with a password is refused; give it without the password and name where the password is, --password-env VAR or --password-file PATH, read each time the context is used.

--ledger names the run ledger file for runs through this context, so a team can share one (the loop guard of dlq redrive sees only the runs its ledger recorded).

--protected guards a context: dlq redrive and replay then ask for the queue name to be typed on a terminal, and refuse --yes unless --max N bounds the run.`
  static override examples = [
    '<%= config.bin %> context add local --broker redis://127.0.0.1:6379',
    '<%= config.bin %> context add prod --broker amqp://ops@rabbit.internal/orders --password-env PROD_AMQP_PASSWORD --protected',
    '<%= config.bin %> context add staging --broker redis://redis.staging:6379 --password-file ~/.secrets/staging-redis',
  ]
  static override args = {name: Args.string({description: 'the context name (letters, digits, ".", "_", "-")', required: true})}
  static override flags = {
    broker: Flags.string({char: 'b', description: 'the broker URL, without a password', required: true}),
    protected: Flags.boolean({description: 'destructive commands need the queue name typed, and --max with --yes'}),
    'password-env': Flags.string({description: 'read the password from this environment variable when the context is used', exclusive: ['password-file']}),
    'password-file': Flags.string({description: 'read the password from this file when the context is used'}),
    ledger: Flags.string({description: 'the run ledger file runs through this context are recorded in (and the loop guard reads): a path a team shares; $BQ_LEDGER still wins'}),
    force: Flags.boolean({description: 'replace a context of the same name'}),
  }

  async run(): Promise<{name: string; broker: string; protected: boolean; password?: Context['password']; file: string}> {
    const {args, flags} = await this.parse(ContextAdd)
    const name = checkContextName(args.name)
    const broker = flags.broker.trim()
    if (brokerScheme(broker) === undefined) throw new UsageError(`"${redactUrl(broker)}" is not a broker URL: expected scheme://…`)
    if (holdsSecret(broker)) {
      throw new UsageError(`${redactUrl(broker)} holds a secret, and bq does not store secrets in clear: give the URL without it and add --password-env VAR or --password-file PATH; nothing was saved`)
    }
    if (flags.protected && urlSaysInsecure(broker)) {
      throw new UsageError(`a protected context always verifies its broker's certificate, and ${redactUrl(broker)} says insecure=true: pass ca=PATH instead; nothing was saved`)
    }
    const envVar = flags['password-env']
    if (envVar !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(envVar)) throw new UsageError(`--password-env ${envVar} is not an environment variable name`)
    const password = envVar !== undefined ? {env: envVar} : flags['password-file'] !== undefined ? {file: resolve(flags['password-file'])} : undefined
    if (password !== undefined && !takesPassword(broker)) throw new UsageError(`${redactUrl(broker)} has no place for a password (bq fills in scheme://user:PASSWORD@host…)`)
    const store = readContexts()
    if (store.contexts[name] !== undefined && !flags.force) throw new UsageError(`context ${name} exists: add --force to replace it, or bq context remove ${name}`)
    const ledger = flags.ledger === undefined ? {} : {ledger: resolve(flags.ledger)}
    const context: Context = {broker, protected: flags.protected === true, ...(password === undefined ? {} : {password}), ...ledger}
    store.contexts[name] = context
    writeContexts(store)
    const file = contextsPath()
    if (!this.jsonEnabled()) this.log(`context ${name}${context.protected ? ' (protected)' : ''} → ${broker} saved in ${file}${store.current === undefined ? `; use it with --context ${name} or bq context use ${name}` : ''}`)
    return {name, ...context, file}
  }
}
