/**
 * `redis://[user][:password@]host[:port][/db][?prefix=queues:][&notify=on|off][&timeout=SECONDS]` (and `rediss://` for TLS) →
 * ioredis options. Unknown query parameters are refused: a typo such as `?prefx=` would
 * otherwise point bq at the wrong keys without a word. The replay marker needs no parameter:
 * it rides in the SDKs' `__bq_frame` frame (see frames.ts).
 */
import {isIP} from 'node:net'
import type {RedisOptions} from 'ioredis'

import {UsageError} from '../../errors.js'

export interface RedisTarget {
  /** Where to connect (no retry/queue policy: the adapter adds that). */
  connection: Pick<RedisOptions, 'host' | 'port' | 'username' | 'password' | 'db' | 'tls'>
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

const KNOWN_PARAMS = new Set(['prefix', 'notify', 'timeout'])

/** Parameters bq once knew, and what replaced them. */
const RETIRED_PARAMS: Record<string, string> = {
  bypass_ttl: "--bypass now stamps bq-replay-bypass in the SDKs' __bq_frame frame, where their consumers read it; drop the parameter",
}

export function parseRedisUrl(url: URL, displayUrl: string): RedisTarget {
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') throw new UsageError(`${displayUrl} is not a redis:// or rediss:// URL`)
  for (const key of url.searchParams.keys()) {
    if (Object.hasOwn(RETIRED_PARAMS, key)) throw new UsageError(`unknown parameter "${key}" in ${displayUrl}: ${RETIRED_PARAMS[key]}`)
    if (!KNOWN_PARAMS.has(key)) throw new UsageError(`unknown parameter "${key}" in ${displayUrl}; known: ${[...KNOWN_PARAMS].join(', ')}`)
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1'
  const port = url.port === '' ? 6379 : Number(url.port)
  const dbText = url.pathname.replace(/^\//, '')
  if (dbText !== '' && !/^\d+$/.test(dbText)) throw new UsageError(`the path of ${displayUrl} must be a database number, like /0`)
  const username = decode(url.username, displayUrl)
  const password = decode(url.password, displayUrl)
  const connection: RedisTarget['connection'] = {host, port, db: dbText === '' ? 0 : Number(dbText)}
  if (username !== '') connection.username = username
  if (password !== '') connection.password = password
  if (url.protocol === 'rediss:') connection.tls = isIP(host) === 0 ? {servername: host} : {}
  const notifyText = url.searchParams.get('notify')
  if (notifyText !== null && notifyText !== 'on' && notifyText !== 'off') throw new UsageError(`notify in ${displayUrl} must be on or off`)
  const prefix = url.searchParams.get('prefix') ?? ''
  const timeoutText = url.searchParams.get('timeout')
  if (timeoutText !== null && !/^[1-9]\d{0,5}$/.test(timeoutText)) throw new UsageError(`timeout in ${displayUrl} must be a whole number of seconds (1 to 999999)`)
  return {
    connection,
    prefix,
    secrets: [password, url.password].filter((s) => s !== ''),
    notify: notifyText === null ? prefix.endsWith('queues:') : notifyText === 'on',
    commandTimeoutMs: timeoutText === null ? undefined : Number(timeoutText) * 1000,
  }
}

function decode(text: string, displayUrl: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    throw new UsageError(`the credentials in ${displayUrl} are not valid percent-encoding`)
  }
}
