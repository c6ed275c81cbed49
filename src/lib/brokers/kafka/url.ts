/**
 * `kafka://[user[:password]@]host[:port][,host[:port]…][?options]` → what the Kafka client needs.
 *
 * The WHATWG URL parser rejects a comma-separated host list with ports, so this parses the raw
 * string itself. Options (all optional):
 *
 * - `sasl=plain|scram-sha-256|scram-sha-512`: SASL mechanism; the username and password come from
 *   the URL's userinfo (percent-encoded), else from `BQ_KAFKA_USERNAME` / `BQ_KAFKA_PASSWORD`.
 * - `ssl=true|false`: TLS, implied by any of the shared TLS options (shared/tls.ts): `ca=PATH`
 *   (trust this CA bundle), `cert=PATH` + `key=PATH` (a client certificate), `servername=NAME`,
 *   `insecure=true`. `ssl=false` with one of them is refused.
 * - `client_id=…`: the client id brokers log (default `bq`).
 * - `partitions=N`, `replication=N`: for topics bq creates (default 1 partition, and a replication
 *   factor of min(3, brokers in the cluster)). Existing topics are never changed.
 */
import type {Timeouts} from '../shared/timeouts.js'
import {TLS_PARAMS, parseTlsParams, type TlsSettings} from '../shared/tls.js'

import {UsageError} from '../../errors.js'

export type SaslMechanism = 'plain' | 'scram-sha-256' | 'scram-sha-512'

export interface KafkaTarget {
  /** `host:port` bootstrap servers. */
  brokers: string[]
  /** TLS (shared/tls.ts); undefined: plaintext. */
  tls?: TlsSettings
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
const KNOWN_OPTIONS = ['sasl', 'ssl', ...TLS_PARAMS, 'client_id', 'partitions', 'replication']

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

  // ssl=true, or any TLS option, turns TLS on; ssl=false beside a TLS option is refused there.
  const sslFlag = parseBoolean(params.get('ssl'), 'ssl', displayUrl)
  const tlsWanted = sslFlag ?? TLS_PARAMS.some((name) => params.has(name))
  const tls = parseTlsParams(params, displayUrl, {tls: tlsWanted, host: brokers[0].replace(/:\d+$/, ''), tlsHint: 'ssl=true'})
  // kafkajs gives each broker it connects to its own name (SNI, the certificate check): a name
  // taken from the first bootstrap host would be wrong for every other broker.
  if (tls !== undefined && !params.has('servername')) delete tls.options.servername

  const clientId = params.get('client_id') ?? 'bq'
  if (clientId === '') throw new UsageError(`${displayUrl}: client_id must not be empty`)
  const partitions = positiveInt(params.get('partitions'), 'partitions', displayUrl) ?? 1
  const replication = positiveInt(params.get('replication'), 'replication', displayUrl)

  const secrets = password === undefined ? [] : [password, encodeURIComponent(password)]
  return {brokers, ...(tls ? {tls} : {}), ...(sasl ? {sasl} : {}), clientId, partitions, ...(replication === undefined ? {} : {replication}), secrets}
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
