/**
 * Which broker a command acts on. The order, first match wins (docs/contexts-and-completion.md):
 *
 *   1. --broker URL            (with --context too: a usage error, the two name a broker each)
 *   2. --context NAME
 *   3. $BQ_BROKER
 *   4. $BQ_CONTEXT
 *   5. the current context     (bq context use NAME)
 *   6. the embedded store
 *
 * Flags before the environment before saved state; at each level a URL before a name. The
 * contexts file is read only when steps 1–4 did not decide, so a plain `-b URL` never depends on it.
 */
import {urlQuery} from '../brokers/shared/parse-url.js'
import {redactUrl} from '../brokers/shared/redact.js'
import {saysInsecure} from '../brokers/shared/tls.js'
import {NotConfirmedError, UsageError} from '../errors.js'
import {readPassword, withPassword} from './secret.js'
import {readContexts} from './store.js'
import type {ContextStore} from './store.js'

/** The context a command runs under: what it says on stderr and in the JSON `context` field. */
export interface ContextInUse {
  name: string
  /** The broker URL as printed: no password (redacted, should one be in a hand-edited file). */
  broker: string
  protected: boolean
  /** What named it: --context, $BQ_CONTEXT, or `bq context use`. */
  from: 'flag' | 'env' | 'current'
  /** The context's own run ledger file, if it names one. */
  ledger?: string
}

export interface BrokerChoice {
  /** The URL to open, password filled in; undefined leaves it to --broker, $BQ_BROKER or the default. */
  url?: string
  context?: ContextInUse
}

function given(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim()
}

export function chooseBroker(flags: {broker?: string; context?: string}, env: NodeJS.ProcessEnv = process.env, load: (env: NodeJS.ProcessEnv) => ContextStore = readContexts): BrokerChoice {
  const broker = given(flags.broker)
  const contextFlag = given(flags.context)
  if (broker !== undefined && contextFlag !== undefined) throw new UsageError('--broker and --context both name a broker: give one of them')
  if (broker !== undefined) return {}
  if (contextFlag !== undefined) return fromContext(contextFlag, 'flag', load(env), env)
  if (given(env.BQ_BROKER) !== undefined) return {}
  const envContext = given(env.BQ_CONTEXT)
  if (envContext !== undefined) return fromContext(envContext, 'env', load(env), env)
  const store = load(env)
  if (store.current !== undefined) return fromContext(store.current, 'current', store, env)
  return {}
}

function fromContext(name: string, from: ContextInUse['from'], store: ContextStore, env: NodeJS.ProcessEnv): BrokerChoice {
  const context = store.contexts[name]
  if (context === undefined) {
    const where = from === 'flag' ? '--context' : from === 'env' ? '$BQ_CONTEXT' : 'the current context (bq context use)'
    throw new UsageError(`no context named "${name}" (from ${where}); bq context list shows the defined ones`)
  }
  if (context.protected && urlQuerySaysInsecure(context.broker)) {
    throw new NotConfirmedError(`context ${name} is protected, and its broker URL says insecure=true: a protected broker's certificate is always verified (pass ca=PATH instead); nothing was done`, 'protected-context')
  }
  const url = context.password === undefined ? context.broker : withPassword(context.broker, readPassword(name, context.password, env))
  return {url, context: {name, broker: redactUrl(context.broker), protected: context.protected, from, ...(context.ledger === undefined ? {} : {ledger: context.ledger})}}
}

function urlQuerySaysInsecure(url: string): boolean {
  return saysInsecure(urlQuery(url))
}

/** The one stderr line a command prints when it acts through a context. */
export function contextLine(context: ContextInUse): string {
  return `bq: context ${context.name}${context.protected ? ' (protected)' : ''} → ${context.broker}`
}
