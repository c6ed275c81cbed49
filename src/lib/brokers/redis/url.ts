/**
 * Redis broker URLs → what to connect to (connection.ts turns that into ioredis options):
 *
 *   redis://[user][:password@]host[:port][/db][?prefix=queues:][&notify=on|off][&timeout=SECONDS]
 *   rediss://…                    the same over TLS, with the shared TLS parameters (ca=, cert=, key=, servername=, insecure=)
 *   redis+sentinel://[user][:password@]host[:port][,host[:port]…]/<master-name>[?db=N][&sentinelPassword=…][&sentinelUsername=…]
 *   rediss+sentinel://…           the same with TLS to the sentinels and to the master
 *
 * Unknown query parameters are refused: a typo such as `?prefx=` would otherwise point bq at the
 * wrong keys without a word. The replay marker needs no parameter: it rides in the SDKs'
 * `__bq_frame` frame (see frames.ts). A sentinel URL's user and password are the master's (the
 * sentinels are asked without credentials unless sentinelPassword= is given).
 */
import {UsageError} from '../../errors.js'
import {parseBrokerUrl} from '../shared/parse-url.js'
import {TLS_PARAMS, type TlsSettings, parseTlsParams} from '../shared/tls.js'

export interface RedisAddress {
  host: string
  port: number
}

export interface SentinelTarget {
  /** Where the sentinels listen; ioredis asks them in turn for the current master. */
  sentinels: RedisAddress[]
  /** The master's name as the sentinels know it (`sentinel monitor <name> …`). */
  masterName: string
  /** sentinelUsername= / sentinelPassword=: when the sentinels want credentials of their own. */
  username?: string
  password?: string
}

export interface RedisTarget {
  /** The server (for a sentinel URL: the first sentinel, for messages only) and the credentials Redis checks. */
  connection: RedisAddress & {username?: string; password?: string; db: number}
  /** TLS settings (rediss://, rediss+sentinel://); undefined for plaintext. */
  tls?: TlsSettings
  /** Set for redis+sentinel:// and rediss+sentinel://: follow the master the sentinels name. */
  sentinel?: SentinelTarget
  /** Prepended to every queue name to make its list key (Laravel-style `queues:`). */
  prefix: string
  /** Values that must never appear in a message. */
  secrets: string[]
  /**
   * Keep Laravel's `<list>:notify` wake-up list in step with every list bq adds to or takes
   * from (one `1` per element added, one popped per element removed). On by default when the
   * prefix ends in `queues:` (Laravel's layout); `notify=on|off` overrides.
   */
  notify: boolean
  /** `timeout=SECONDS`: how long one command may wait for Redis's answer (undefined: the adapter's default). */
  commandTimeoutMs?: number
}

/** Every scheme this broker answers to (registry.ts). */
export const REDIS_SCHEMES = ['redis', 'rediss', 'redis+sentinel', 'rediss+sentinel'] as const

const COMMON_PARAMS = ['prefix', 'notify', 'timeout']
const SENTINEL_PARAMS = ['db', 'sentinelPassword', 'sentinelUsername']
const DEFAULT_PORT = 6379
const DEFAULT_SENTINEL_PORT = 26379
/** Stands in for a sentinel URL's host list, which WHATWG URL parsing does not accept. */
const HOSTS_PLACEHOLDER = 'sentinels.invalid'

/** Parameters bq once knew, and what replaced them. */
const RETIRED_PARAMS: Record<string, string> = {
  bypass_ttl: "--bypass now stamps bq-replay-bypass in the SDKs' __bq_frame frame, where their consumers read it; drop the parameter",
}

/**
 * `url` as given (a string: a sentinel URL may list several hosts) or already parsed (then a
 * sentinel URL has the one host WHATWG URL parsing allows).
 */
export function parseRedisUrl(input: URL | string, displayUrl: string): RedisTarget {
  const {url, hosts} = typeof input === 'string' ? splitHosts(input, displayUrl) : {url: input, hosts: undefined}
  const scheme = url.protocol.replace(/:$/, '')
  if (!(REDIS_SCHEMES as readonly string[]).includes(scheme)) throw new UsageError(`${displayUrl} is not a ${REDIS_SCHEMES.map((s) => `${s}://`).join(', ')} URL`)
  const sentinelMode = scheme.endsWith('+sentinel')
  const tlsScheme = scheme.startsWith('rediss')
  const known = [...COMMON_PARAMS, ...(sentinelMode ? SENTINEL_PARAMS : []), ...TLS_PARAMS]
  for (const key of url.searchParams.keys()) {
    if (Object.hasOwn(RETIRED_PARAMS, key)) throw new UsageError(`unknown parameter "${key}" in ${displayUrl}: ${RETIRED_PARAMS[key]}`)
    if (!known.includes(key)) throw new UsageError(`unknown parameter "${key}" in ${displayUrl}; known: ${known.join(', ')}`)
  }
  const username = decode(url.username, displayUrl)
  const password = decode(url.password, displayUrl)
  const sentinel = sentinelMode ? sentinelOf(url, hosts, displayUrl) : undefined
  const host = sentinel?.sentinels[0].host ?? hostOf(url)
  const port = sentinel?.sentinels[0].port ?? portOf(url.port, DEFAULT_PORT, displayUrl)
  const connection: RedisTarget['connection'] = {host, port, db: sentinelMode ? sentinelDb(url, displayUrl) : pathDb(url, displayUrl)}
  if (username !== '') connection.username = username
  if (password !== '') connection.password = password
  const tls = parseTlsParams(url.searchParams, displayUrl, {tls: tlsScheme, host, tlsHint: sentinelMode ? 'rediss+sentinel://' : 'rediss://'})
  // Each sentinel and the master it names are checked against their own host name, unless servername= says otherwise.
  if (tls !== undefined && sentinel !== undefined && !url.searchParams.has('servername')) delete tls.options.servername
  const notifyText = url.searchParams.get('notify')
  if (notifyText !== null && notifyText !== 'on' && notifyText !== 'off') throw new UsageError(`notify in ${displayUrl} must be on or off`)
  const prefix = url.searchParams.get('prefix') ?? ''
  const timeoutText = url.searchParams.get('timeout')
  if (timeoutText !== null && !/^[1-9]\d{0,5}$/.test(timeoutText)) throw new UsageError(`timeout in ${displayUrl} must be a whole number of seconds (1 to 999999)`)
  return {
    connection,
    ...(tls === undefined ? {} : {tls}),
    ...(sentinel === undefined ? {} : {sentinel}),
    prefix,
    secrets: [password, url.password, sentinel?.password ?? '', url.searchParams.get('sentinelPassword') ?? ''].filter((s) => s !== ''),
    notify: notifyText === null ? prefix.endsWith('queues:') : notifyText === 'on',
    commandTimeoutMs: timeoutText === null ? undefined : Number(timeoutText) * 1000,
  }
}

/** A sentinel URL's comma-separated host list, taken out so the rest parses as a URL. */
function splitHosts(rawUrl: string, displayUrl: string): {url: URL; hosts: RedisAddress[] | undefined} {
  const match = /^(rediss?\+sentinel:\/\/)([^/?#]*)(.*)$/is.exec(rawUrl.trim())
  if (match === null) return {url: parseBrokerUrl(rawUrl, displayUrl), hosts: undefined}
  const [, scheme, authority, rest] = match
  const at = authority.lastIndexOf('@')
  const userinfo = at === -1 ? '' : authority.slice(0, at + 1)
  const list = authority.slice(at + 1)
  const hosts = list.split(',').map((item) => addressOf(item.trim(), displayUrl))
  return {url: parseBrokerUrl(`${scheme.toLowerCase()}${userinfo}${HOSTS_PLACEHOLDER}${rest}`, displayUrl), hosts}
}

/** `host`, `host:port`, `[v6]` or `[v6]:port` of a sentinel list. */
function addressOf(item: string, displayUrl: string): RedisAddress {
  const match = /^(\[[^\]]+\]|[^:[\]]*)(?::(.*))?$/.exec(item)
  if (match === null || match[1] === '') throw new UsageError(`${displayUrl}: "${item}" is not a sentinel address (host:port)`)
  return {host: match[1].replace(/^\[(.*)\]$/, '$1'), port: portOf(match[2] ?? '', DEFAULT_SENTINEL_PORT, displayUrl)}
}

function sentinelOf(url: URL, hosts: RedisAddress[] | undefined, displayUrl: string): SentinelTarget {
  const sentinels = hosts ?? [{host: hostOf(url), port: portOf(url.port, DEFAULT_SENTINEL_PORT, displayUrl)}]
  const masterName = decode(url.pathname.replace(/^\//, ''), displayUrl)
  if (masterName === '' || masterName.includes('/')) {
    throw new UsageError(`the path of ${displayUrl} must be the master's name as the sentinels know it, like /mymaster (the database is ?db=N)`)
  }
  const sentinel: SentinelTarget = {sentinels, masterName}
  const username = url.searchParams.get('sentinelUsername')
  const password = url.searchParams.get('sentinelPassword')
  if (username !== null && username !== '') sentinel.username = username
  if (password !== null && password !== '') sentinel.password = password
  return sentinel
}

function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1'
}

function portOf(text: string, fallback: number, displayUrl: string): number {
  if (text === '') return fallback
  const port = Number(text)
  if (!/^\d+$/.test(text) || port < 1 || port > 65_535) throw new UsageError(`${displayUrl}: "${text}" is not a port number`)
  return port
}

function pathDb(url: URL, displayUrl: string): number {
  const dbText = url.pathname.replace(/^\//, '')
  if (dbText !== '' && !/^\d+$/.test(dbText)) throw new UsageError(`the path of ${displayUrl} must be a database number, like /0`)
  return dbText === '' ? 0 : Number(dbText)
}

function sentinelDb(url: URL, displayUrl: string): number {
  const dbText = url.searchParams.get('db')
  if (dbText !== null && !/^\d+$/.test(dbText)) throw new UsageError(`db in ${displayUrl} must be a database number, like db=0`)
  return dbText === null ? 0 : Number(dbText)
}

function decode(text: string, displayUrl: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    throw new UsageError(`the credentials in ${displayUrl} are not valid percent-encoding`)
  }
}
