import {chooseBroker} from '../contexts/resolve.js'
import {readContexts} from '../contexts/store.js'
import {UsageError} from '../errors.js'

/**
 * The brokers `bq trace` reads: the one a command would act on (--broker, $BQ_BROKER, the current
 * context, the embedded store), each context named with --context, or every defined context
 * (--all-contexts); --broker with contexts reads that broker as well. Protected contexts are fine: trace only reads.
 */
export interface TraceBroker {
  /** The context's name; undefined for a broker given by URL or the default. */
  context?: string
  protected: boolean
  /** The URL to open (password filled in); undefined = the default broker (--broker, $BQ_BROKER, the embedded store). */
  url?: string
}

export function traceBrokers(flags: {broker?: string; context?: string[]; 'all-contexts'?: boolean}): TraceBroker[] {
  const named = flags.context ?? []
  // --broker with contexts: that broker too, first (a broker no context names, beside those that do).
  const given: TraceBroker[] = flags.broker !== undefined && (named.length > 0 || flags['all-contexts']) ? [{protected: false, url: flags.broker}] : []
  let names = named
  if (flags['all-contexts']) {
    names = Object.keys(readContexts().contexts).sort()
    if (names.length === 0) throw new UsageError('--all-contexts: no context is defined (bq context add NAME -b URL defines one)')
  }
  if (names.length === 0) {
    const choice = chooseBroker({broker: flags.broker})
    if (choice.context === undefined) return [{protected: false, url: flags.broker}]
    return [{context: choice.context.name, protected: choice.context.protected, url: choice.url}]
  }
  return [
    ...given,
    ...[...new Set(names)].map((name) => {
      const choice = chooseBroker({context: name})
      return {context: name, protected: choice.context?.protected ?? false, url: choice.url}
    }),
  ]
}
