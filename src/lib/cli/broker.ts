import type {BrokerAdapter} from '../brokers/adapter.js'
import {openBroker, resolveBrokerUrl} from '../brokers/registry.js'
import type {OpenBrokerOptions} from '../brokers/registry.js'
import {UsageError} from '../errors.js'

/** `warn` (from OpenBrokerOptions) is also where a connection that will not close after the work is done is reported. */
export type WithBrokerOptions = OpenBrokerOptions

/**
 * Opens the broker a command was pointed at, runs `work`, and always closes it. `options`:
 * --timeout, and the command's warning path.
 *
 * Once `work` has finished, everything it did is confirmed (drain sessions settle and close
 * inside it); closing the connection is only teardown. A close that fails or times out then (a
 * broker that never answers the close frame) is a warning, not a failed run: reporting exit 4
 * after every message moved would send an operator to redo finished work.
 */
export async function withBroker<T>(flag: string | undefined, work: (adapter: BrokerAdapter) => Promise<T>, options: WithBrokerOptions = {}): Promise<T> {
  const adapter = await openBroker(resolveBrokerUrl(flag), options)
  let result: T
  try {
    result = await work(adapter)
  } catch (error) {
    await adapter.close().catch(() => undefined)
    throw error
  }
  try {
    await adapter.close()
  } catch (error) {
    if (options.warn === undefined) throw error
    options.warn(`the work is done, but ${(error as Error).message}`)
  }
  return result
}

/**
 * Opens the source broker (`--broker`) and, with `--to-broker`, a second broker to publish to;
 * runs `work(source, target)` and always closes both. Without `--to-broker` the target is the
 * source itself.
 */
export async function withBrokers<T>(
  sourceFlag: string | undefined,
  toBrokerFlag: string | undefined,
  work: (source: BrokerAdapter, target: BrokerAdapter) => Promise<T>,
  options: WithBrokerOptions = {},
): Promise<T> {
  return withBroker(sourceFlag, (source) => (toBrokerFlag ? withBroker(toBrokerFlag, (target) => work(source, target), options) : work(source, source)), options)
}

/** The broker a publishing command writes to: `--to-broker` when given, else `--broker` (else $BQ_BROKER, else the embedded store). */
export async function withTargetBroker<T>(brokerFlag: string | undefined, toBrokerFlag: string | undefined, work: (target: BrokerAdapter) => Promise<T>, options: WithBrokerOptions = {}): Promise<T> {
  return withBroker(toBrokerFlag || brokerFlag, work, options)
}

/** What a read leaves behind on a broker without a true peek, for the note peek and inspect print. */
export function readTrace(adapter: BrokerAdapter): string {
  return adapter.capabilities.receiveSideEffects
    ? 'were received and made visible again; the receive count of each rose by one'
    : 'were returned to their places and are now flagged redelivered'
}

/** Refuses to read from a broker where reading has side effects, unless the operator said --receive. */
export function requireReceiveConsent(adapter: BrokerAdapter, consent: boolean, what: string): void {
  if (adapter.capabilities.receiveSideEffects && !consent) {
    throw new UsageError(`${adapter.kind} has no true peek: ${what} would receive the messages, which raises their receive count and can move them to a native dead-letter queue. Nothing was read; add --receive to accept that`)
  }
}
