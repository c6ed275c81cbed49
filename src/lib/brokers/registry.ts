/**
 * Broker URL → adapter. Each broker's folder (and so its SDK) loads only when one of its schemes
 * is used: opening a `redis://` URL loads ioredis and nothing else, and an SDK that is not
 * installed costs a one-line error, not a crash at startup. Adding a broker is one line here.
 */

import {BqError, UsageError, describeError} from '../errors.js'
import type {BrokerAdapter, BrokerModule} from './adapter.js'
import {defaultBrokerUrl} from './default-url.js'
import {boundAdapter} from './shared/bounded.js'
import {urlQuery} from './shared/parse-url.js'
import {redactUrl} from './shared/redact.js'
import {insecureWarning, saysInsecure} from './shared/tls.js'
import {DEFAULT_TIMEOUTS, type Timeouts, timeoutError, timeoutsFor, withinDeadline} from './shared/timeouts.js'

export {redactUrl} from './shared/redact.js'

interface BrokerEntry {
  /** URL schemes (lower case) that select this broker. */
  schemes: readonly string[]
  /** The npm package the broker's folder loads, named when it is missing. */
  sdk: string
  /** The broker as messages name it. */
  name: string
  /** The adapter's kind (BrokerAdapter.kind), known from the URL before anything is opened. */
  kind: string
  load: () => Promise<{broker: BrokerModule}>
}

const BROKERS: readonly BrokerEntry[] = [
  {schemes: ['sqlite'], kind: 'sqlite', name: 'the embedded store', sdk: 'better-sqlite3', load: () => import('./sqlite/index.js')},
  // redis+sentinel:// and rediss+sentinel:// follow the master a set of sentinels names.
  {schemes: ['redis', 'rediss', 'redis+sentinel', 'rediss+sentinel'], kind: 'redis', name: 'Redis', sdk: 'ioredis', load: () => import('./redis/index.js')},
  {schemes: ['amqp', 'amqps'], kind: 'rabbitmq', name: 'RabbitMQ', sdk: 'amqplib', load: () => import('./rabbitmq/index.js')},
  {schemes: ['kafka'], kind: 'kafka', name: 'Kafka', sdk: 'kafkajs', load: () => import('./kafka/index.js')},
  {schemes: ['sqs'], kind: 'sqs', name: 'SQS', sdk: '@aws-sdk/client-sqs', load: () => import('./sqs/index.js')},
  {schemes: ['artemis', 'artemis+ssl'], kind: 'artemis', name: 'Artemis', sdk: 'rhea', load: () => import('./artemis/index.js')},
  // Pulsar's WebSocket API through the `ws` package (no native client: see pulsar/adapter.ts).
  {schemes: ['pulsar', 'pulsar+ssl'], kind: 'pulsar', name: 'Pulsar', sdk: 'ws', load: () => import('./pulsar/index.js')},
  // Also Azure connection strings (Endpoint=sb://…), which brokerScheme maps to sb.
  {schemes: ['sb'], kind: 'service-bus', name: 'Service Bus', sdk: '@azure/service-bus', load: () => import('./service-bus/index.js')},
]

/** The adapter kind a broker URL selects (redis, rabbitmq, …), or undefined for an unknown scheme. */
export function brokerKind(url: string): string | undefined {
  const scheme = brokerScheme(url)
  return BROKERS.find((entry) => scheme !== undefined && entry.schemes.includes(scheme))?.kind
}

/** The schemes whose URLs may say `?timeout=SECONDS` (redis/url.ts). */
const REDIS_TIMEOUT_SCHEMES = new Set(['redis', 'rediss', 'redis+sentinel', 'rediss+sentinel'])

/** Every scheme bq recognises. */
export const KNOWN_SCHEMES: readonly string[] = BROKERS.flatMap((entry) => entry.schemes)

/** The `--broker` flag, else `BQ_BROKER`, else the embedded default. Empty values count as unset. */
export function resolveBrokerUrl(flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (flag !== undefined && flag.trim() !== '') return flag.trim()
  const fromEnv = env.BQ_BROKER
  if (fromEnv !== undefined && fromEnv.trim() !== '') return fromEnv.trim()
  return defaultBrokerUrl(env)
}

/** The lower-case scheme of a broker URL; an Azure connection string (`Endpoint=sb://…`) counts as `sb`. */
export function brokerScheme(url: string): string | undefined {
  if (/^\s*endpoint\s*=\s*sb:\/\//i.test(url)) return 'sb'
  return /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1].toLowerCase()
}

export interface OpenBrokerOptions {
  /** `--timeout SECONDS`: connect and operation timeout (undefined: the defaults, shared/timeouts.ts). */
  timeoutSeconds?: number
  /** The command's warning path (stderr and the JSON `warnings`); plain stderr when not given. */
  warn?: (message: string) => void
}

/** A URL whose query says insecure=true (connection strings have no query: never). */
export function urlSaysInsecure(url: string): boolean {
  return saysInsecure(urlQuery(url))
}

/**
 * Opens the adapter for a broker URL. Errors carry only the redacted URL. The connect and every
 * later call are bounded (shared/timeouts.ts, shared/bounded.ts); the embedded store has no
 * network to wait for.
 */
export async function openBroker(url: string, options: OpenBrokerOptions = {}): Promise<BrokerAdapter> {
  const displayUrl = redactUrl(url)
  const scheme = brokerScheme(url)
  if (scheme === undefined) {
    throw new UsageError(`"${displayUrl}" is not a broker URL: expected scheme://…, one of ${KNOWN_SCHEMES.join(', ')}`)
  }
  const entry = BROKERS.find((candidate) => candidate.schemes.includes(scheme))
  if (entry === undefined) throw new UsageError(`unknown broker URL scheme "${scheme}" in ${displayUrl}; known: ${KNOWN_SCHEMES.join(', ')}`)
  const {broker} = await importAdapter(scheme, entry.sdk, entry.load)
  // Every run that skips certificate checks says so, so it cannot become a silent habit.
  if (urlSaysInsecure(url)) (options.warn ?? ((text: string) => process.stderr.write(`Warning: ${text}\n`)))(insecureWarning(displayUrl))
  const timeouts = options.timeoutSeconds === undefined ? urlTimeouts(url, scheme) : timeoutsFor(options.timeoutSeconds)
  if (scheme === 'sqlite') return broker.open(url, displayUrl, {timeouts})
  // The adapters bound their own connect; this holds for any that would not, and closes a late one.
  const slack = 1000
  const adapter = await withinDeadline(
    broker.open(url, displayUrl, {timeouts, warn: options.warn}),
    timeouts.connectMs + slack,
    () => timeoutError(entry.name, displayUrl, 'connecting', timeouts.connectMs, timeouts),
    (late) => void late.then((opened) => opened.close()).catch(() => undefined),
  )
  return boundAdapter(adapter, entry.name, timeouts)
}

/** Redis's `?timeout=SECONDS` sets its operation timeout when --timeout is not given (redis/url.ts checks the value). */
function urlTimeouts(url: string, scheme: string): Timeouts {
  if (!REDIS_TIMEOUT_SCHEMES.has(scheme)) return DEFAULT_TIMEOUTS
  const text = urlQuery(url).get('timeout')
  if (text === null || !/^[1-9]\d{0,5}$/.test(text)) return DEFAULT_TIMEOUTS
  return {...DEFAULT_TIMEOUTS, operationMs: Number(text) * 1000, explicit: true}
}

/**
 * Loads a broker's folder, turning a missing or broken SDK into one line naming the package.
 * Exported for tests, which pass a failing importer.
 */
export async function importAdapter<T>(scheme: string, packageName: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load()
  } catch (error) {
    if (error instanceof BqError) throw error
    const code = (error as NodeJS.ErrnoException | undefined)?.code
    const message = describeError(error)
    if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') && message.includes(`'${packageName}'`)) {
      throw new BqError(`the ${scheme}:// broker needs the npm package ${packageName}, which is not installed: run npm install ${packageName}`, {code: 'missing-package', cause: error})
    }
    throw new BqError(`the ${scheme}:// broker adapter could not be loaded (package ${packageName}): ${message}`, {code: 'missing-package', cause: error})
  }
}
