/**
 * Broker URL → adapter. Adapters (and so their broker SDKs) load lazily: opening a `redis://`
 * URL loads ioredis and nothing else, and an SDK that is not installed costs a one-line error,
 * not a crash at startup.
 */
import {homedir} from 'node:os'
import {isAbsolute, join} from 'node:path'

import {BqError, UsageError, describeError} from '../errors.js'
import type {BrokerAdapter} from './adapter.js'
import {redactUrl} from './shared/redact.js'

export {redactUrl} from './shared/redact.js'

/** `$XDG_DATA_HOME` (only when absolute, as the XDG spec says) or `~/.local/share`. */
export function dataDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_DATA_HOME
  if (xdg !== undefined && xdg !== '' && isAbsolute(xdg)) return xdg
  return join(homedir(), '.local', 'share')
}

/** The embedded store used when nothing is configured. */
export function defaultBrokerUrl(env: NodeJS.ProcessEnv = process.env): string {
  return `sqlite://${join(dataDir(env), 'bq', 'queues.db')}`
}

/** The `--broker` flag, else `BQ_BROKER`, else the embedded default. Empty values count as unset. */
export function resolveBrokerUrl(flag?: string, env: NodeJS.ProcessEnv = process.env): string {
  if (flag !== undefined && flag.trim() !== '') return flag.trim()
  const fromEnv = env.BQ_BROKER
  if (fromEnv !== undefined && fromEnv.trim() !== '') return fromEnv.trim()
  return defaultBrokerUrl(env)
}

type Open = (rawUrl: string, displayUrl: string) => Promise<BrokerAdapter>

// Each opener imports its adapter module (and so its SDK) only when its scheme is used.
const openSqlite: Open = async (rawUrl, displayUrl) => {
  const {openSqliteAdapter} = await importAdapter('sqlite', 'better-sqlite3', () => import('./sqlite/adapter.js'))
  return openSqliteAdapter(sqlitePath(rawUrl, displayUrl), displayUrl)
}

const openRedis: Open = async (rawUrl, displayUrl) => {
  const {createRedisAdapter} = await importAdapter('redis', 'ioredis', () => import('./redis/adapter.js'))
  return createRedisAdapter(parseUrl(rawUrl, displayUrl), displayUrl)
}

const openRabbit: Open = async (rawUrl, displayUrl) => {
  const {createRabbitAdapter} = await importAdapter('amqp', 'amqplib', () => import('./rabbitmq/adapter.js'))
  return createRabbitAdapter(parseUrl(rawUrl, displayUrl), displayUrl)
}

/** What the Kafka, SQS and Artemis adapter modules export. */
interface UrlAdapterModule {
  createAdapter(url: URL, displayUrl: string): Promise<BrokerAdapter> | BrokerAdapter
  /** Optional: takes the raw URL, for URLs the WHATWG parser rejects (Kafka's `host:port,host:port` list). */
  createAdapterFromString?(rawUrl: string, displayUrl: string): Promise<BrokerAdapter> | BrokerAdapter
}

/** An opener for a module exporting `createAdapter`; the specifier is a variable so this file compiles while a module is being written. */
function urlAdapter(scheme: string, packageName: string, modulePath: string): Open {
  return async (rawUrl, displayUrl) => {
    const module = await importAdapter(scheme, packageName, () => import(modulePath) as Promise<UrlAdapterModule>)
    if (typeof module.createAdapterFromString === 'function') return module.createAdapterFromString(rawUrl, displayUrl)
    return module.createAdapter(parseUrl(rawUrl, displayUrl), displayUrl)
  }
}
const KAFKA_MODULE = './kafka.js'
const SQS_MODULE = './sqs.js'
const ARTEMIS_MODULE = './artemis.js'
const PULSAR_MODULE = './pulsar.js'
const SERVICE_BUS_MODULE = './service-bus.js'
const openKafka = urlAdapter('kafka', 'kafkajs', KAFKA_MODULE)
const openArtemis = urlAdapter('artemis', 'rhea', ARTEMIS_MODULE)
// Pulsar's WebSocket API through the `ws` package (no native client: see pulsar.ts).
const openPulsar = urlAdapter('pulsar', 'ws', PULSAR_MODULE)

const AVAILABLE: Record<string, Open> = {
  sqlite: openSqlite,
  redis: openRedis,
  rediss: openRedis,
  amqp: openRabbit,
  amqps: openRabbit,
  kafka: openKafka,
  sqs: urlAdapter('sqs', '@aws-sdk/client-sqs', SQS_MODULE),
  artemis: openArtemis,
  'artemis+ssl': openArtemis,
  // Also opens Azure connection strings (Endpoint=sb://…), which brokerScheme maps to sb and the module parses itself.
  sb: urlAdapter('sb', '@azure/service-bus', SERVICE_BUS_MODULE),
  pulsar: openPulsar,
  'pulsar+ssl': openPulsar,
}

/** Schemes bq knows but whose adapters are not shipped yet. */
const PLANNED: Record<string, string> = {}

/** Every scheme bq recognises, available or not. */
export const KNOWN_SCHEMES: readonly string[] = [...Object.keys(AVAILABLE), ...Object.keys(PLANNED)]

/** The lower-case scheme of a broker URL; an Azure connection string (`Endpoint=sb://…`) counts as `sb`. */
export function brokerScheme(url: string): string | undefined {
  if (/^\s*endpoint\s*=\s*sb:\/\//i.test(url)) return 'sb'
  return /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1].toLowerCase()
}

/** Opens the adapter for a broker URL. Errors carry only the redacted URL. */
export async function openBroker(url: string): Promise<BrokerAdapter> {
  const displayUrl = redactUrl(url)
  const scheme = brokerScheme(url)
  if (scheme === undefined) {
    throw new UsageError(`"${displayUrl}" is not a broker URL: expected scheme://…, one of ${KNOWN_SCHEMES.join(', ')}`)
  }
  const available = AVAILABLE[scheme]
  if (available !== undefined) return available(url, displayUrl)
  const planned = PLANNED[scheme]
  if (planned !== undefined) {
    throw new UsageError(`${scheme}:// (${planned}) is not available in this version of bq yet; available: ${Object.keys(AVAILABLE).join(', ')}`)
  }
  throw new UsageError(`unknown broker URL scheme "${scheme}" in ${displayUrl}; known: ${KNOWN_SCHEMES.join(', ')}`)
}

/**
 * Loads an adapter module, turning a missing or broken SDK into one line naming the package.
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

/** `sqlite://PATH`: everything after the scheme is the file path, verbatim. */
export function sqlitePath(url: string, displayUrl = redactUrl(url)): string {
  const path = url.replace(/^sqlite:\/\//i, '')
  if (path === '') throw new UsageError(`${displayUrl} names no database file: use sqlite:///absolute/path.db or sqlite://relative/path.db`)
  return path
}

function parseUrl(url: string, displayUrl: string): URL {
  try {
    return new URL(url)
  } catch {
    throw new UsageError(`${displayUrl} is not a valid URL`)
  }
}
