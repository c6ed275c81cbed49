/**
 * `kafka://[user[:password]@]host[:port][,host[:port]…][?options]` → what the Kafka client needs.
 *
 * The WHATWG URL parser rejects a comma-separated host list with ports, so this parses the raw
 * string itself. Options (all optional):
 *
 * - `sasl=plain|scram-sha-256|scram-sha-512`: SASL mechanism; the username and password come from
 *   the URL's userinfo (percent-encoded), else from `BQ_KAFKA_USERNAME` / `BQ_KAFKA_PASSWORD`.
 * - `ssl=true|false`: TLS (implied by `ca`); `ca=/path/to/ca.pem`: trust this CA bundle.
 * - `client_id=…`: the client id brokers log (default `bq`).
 * - `partitions=N`, `replication=N`: for topics bq creates (default 1 partition, and a replication
 *   factor of min(3, brokers in the cluster)). Existing topics are never changed.
 */
import type {Timeouts} from '../shared/timeouts.js'
import {readFileSync} from 'node:fs'

import {UsageError, describeError} from '../../errors.js'

export type SaslMechanism = 'plain' | 'scram-sha-256' | 'scram-sha-512'

export interface KafkaTarget {
  /** `host:port` bootstrap servers. */
  brokers: string[]
  /** false, true (system CAs), or TLS options with a CA bundle. */
  ssl: boolean | {ca: string[]}
  sasl?: {mechanism: SaslMechanism; username: string; password: string}
  clientId: string
  /** Partitions of a topic bq creates. */
  partitions: number
  /** Replication factor of a topic bq creates; undefined = min(3, brokers in the cluster). */
  replication?: number
  /** Values that must never appear in a message (the password, raw and encoded). */
  secrets: string[]
  /** Connect and request timeouts (--timeout); the registry sets them, absent in tests that build a target by hand. */
  timeouts?: Timeouts
}

export const DEFAULT_KAFKA_PORT = 9092
const MECHANISMS: readonly SaslMechanism[] = ['plain', 'scram-sha-256', 'scram-sha-512']
const KNOWN_OPTIONS = ['sasl', 'ssl', 'ca', 'client_id', 'partitions', 'replication']

export function parseKafkaUrl(raw: string, displayUrl: string, env: NodeJS.ProcessEnv = process.env): KafkaTarget {
  const match = /^kafka:\/\/([^/?#]*)(\/[^?#]*)?(\?[^#]*)?(#.*)?$/i.exec(raw.trim())
  if (match === null) throw new UsageError(`${displayUrl} is not a kafka:// URL: expected kafka://host:port[,host:port][?options]`)
  const [, authority, path, query] = match
  if (path !== undefined && path !== '/') throw new UsageError(`${displayUrl}: a kafka:// URL has no path (topics are named by the command, not the URL)`)

  // The last `@` ends the userinfo, so a password may contain `@` if it is percent-encoded or not.
  const at = authority.lastIndexOf('@')
  const userinfo = at === -1 ? undefined : authority.slice(0, at)
  const hostList = at === -1 ? authority : authority.slice(at + 1)
  if (hostList.trim() === '') throw new UsageError(`${displayUrl} names no broker: use kafka://host:port`)
  const brokers = hostList.split(',').map((entry) => parseHostPort(entry.trim(), displayUrl))

  const params = new URLSearchParams(query ?? '')
  for (const key of params.keys()) {
    if (!KNOWN_OPTIONS.includes(key)) throw new UsageError(`${displayUrl}: unknown parameter "${key}" (known: ${KNOWN_OPTIONS.join(', ')})`)
  }

  let username: string | undefined
  let password: string | undefined
  if (userinfo !== undefined) {
    const colon = userinfo.indexOf(':')
    username = decode(colon === -1 ? userinfo : userinfo.slice(0, colon), displayUrl)
    password = colon === -1 ? undefined : decode(userinfo.slice(colon + 1), displayUrl)
  }
  if (username === undefined || username === '') username = nonEmpty(env.BQ_KAFKA_USERNAME)
  if (password === undefined || password === '') password = nonEmpty(env.BQ_KAFKA_PASSWORD)

  const mechanismText = params.get('sasl')?.toLowerCase()
  let sasl: KafkaTarget['sasl']
  if (mechanismText !== undefined && mechanismText !== '') {
    if (!MECHANISMS.includes(mechanismText as SaslMechanism)) throw new UsageError(`${displayUrl}: sasl must be one of ${MECHANISMS.join(', ')}, got "${mechanismText}"`)
    if (username === undefined || password === undefined) {
      throw new UsageError(`${displayUrl}: sasl=${mechanismText} needs a username and password (in the URL as kafka://user:password@host, or in BQ_KAFKA_USERNAME and BQ_KAFKA_PASSWORD)`)
    }
    sasl = {mechanism: mechanismText as SaslMechanism, username, password}
  } else if (userinfo !== undefined && userinfo !== '') {
    // Credentials without a mechanism would be silently ignored: say so instead.
    throw new UsageError(`${displayUrl} carries credentials but no SASL mechanism: add ?sasl=plain, ?sasl=scram-sha-256 or ?sasl=scram-sha-512`)
  }

  const caPath = params.get('ca') ?? undefined
  let ssl: KafkaTarget['ssl'] = parseBoolean(params.get('ssl'), 'ssl', displayUrl) ?? false
  if (caPath !== undefined && caPath !== '') {
    if (params.has('ssl') && ssl === false) throw new UsageError(`${displayUrl}: ca= needs TLS, but ssl=false`)
    let ca: string
    try {
      ca = readFileSync(caPath, 'utf8')
    } catch (error) {
      throw new UsageError(`${displayUrl}: cannot read the CA bundle ${caPath}: ${describeError(error)}`)
    }
    ssl = {ca: [ca]}
  }

  const clientId = params.get('client_id') ?? 'bq'
  if (clientId === '') throw new UsageError(`${displayUrl}: client_id must not be empty`)
  const partitions = positiveInt(params.get('partitions'), 'partitions', displayUrl) ?? 1
  const replication = positiveInt(params.get('replication'), 'replication', displayUrl)

  const secrets = password === undefined ? [] : [password, encodeURIComponent(password)]
  return {brokers, ssl, ...(sasl ? {sasl} : {}), clientId, partitions, ...(replication === undefined ? {} : {replication}), secrets}
}

/** `host`, `host:port`, `[v6]` or `[v6]:port` → `host:port`. */
function parseHostPort(entry: string, displayUrl: string): string {
  const match = /^(\[[0-9a-f:.]+\]|[^\s:[\]]+)(?::(\d{1,5}))?$/i.exec(entry)
  if (match === null) throw new UsageError(`${displayUrl}: "${entry}" is not a host[:port]`)
  const port = match[2] === undefined ? DEFAULT_KAFKA_PORT : Number(match[2])
  if (port < 1 || port > 65_535) throw new UsageError(`${displayUrl}: port ${port} is out of range`)
  // The Kafka client (client/) takes IPv6 literals without brackets.
  const host = match[1].startsWith('[') ? match[1].slice(1, -1) : match[1]
  return `${host}:${port}`
}

function decode(text: string, displayUrl: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    throw new UsageError(`${displayUrl}: the credentials are not valid percent-encoding`)
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value
}

function parseBoolean(value: string | null, name: string, displayUrl: string): boolean | undefined {
  if (value === null) return undefined
  const lower = value.toLowerCase()
  if (lower === 'true' || lower === '1' || lower === '') return true
  if (lower === 'false' || lower === '0') return false
  throw new UsageError(`${displayUrl}: ${name} must be true or false, got "${value}"`)
}

function positiveInt(value: string | null, name: string, displayUrl: string): number | undefined {
  if (value === null) return undefined
  const n = Number(value)
  if (!Number.isSafeInteger(n) || n < 1) throw new UsageError(`${displayUrl}: ${name} must be a positive integer, got "${value}"`)
  return n
}
