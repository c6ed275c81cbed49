/**
 * `artemis://[user:password@]host[:port]` and `artemis+ssl://…` (TLS) → where and how to connect
 * over AMQP 1.0. No query parameters are known, so any is refused: a typo would otherwise be
 * ignored without a word. A custom CA for TLS comes from NODE_EXTRA_CA_CERTS.
 */
import {isIP} from 'node:net'

import {UsageError} from '../../errors.js'

export interface ArtemisTarget {
  host: string
  port: number
  tls: boolean
  username?: string
  password?: string
  /** Values that must never appear in a message. */
  secrets: string[]
}

/** The AMQP ports (IANA): 5672 plain, 5671 over TLS. */
const PLAIN_PORT = 5672
const TLS_PORT = 5671

export function parseArtemisUrl(url: URL, displayUrl: string): ArtemisTarget {
  const tls = url.protocol === 'artemis+ssl:'
  if (!tls && url.protocol !== 'artemis:') throw new UsageError(`${displayUrl} is not an artemis:// or artemis+ssl:// URL`)
  for (const key of url.searchParams.keys()) throw new UsageError(`unknown parameter "${key}" in ${displayUrl}: artemis:// URLs take none`)
  if (url.pathname !== '' && url.pathname !== '/') throw new UsageError(`${displayUrl} has a path; an artemis:// URL names only the broker (user:password@host:port)`)
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
  if (host === '') throw new UsageError(`${displayUrl} names no host`)
  const port = url.port === '' ? (tls ? TLS_PORT : PLAIN_PORT) : Number(url.port)
  const username = decode(url.username, displayUrl)
  const password = decode(url.password, displayUrl)
  const target: ArtemisTarget = {host, port, tls, secrets: [password, url.password].filter((secret) => secret !== '')}
  if (username !== '') target.username = username
  if (password !== '') target.password = password
  return target
}

/**
 * The TLS server name to present: the host name, or '' for an IP address (SNI forbids those; an
 * empty name sends none, and Node still checks the certificate against the host).
 */
export function serverName(host: string): string {
  return isIP(host) === 0 ? host : ''
}

function decode(text: string, displayUrl: string): string {
  try {
    return decodeURIComponent(text)
  } catch {
    throw new UsageError(`the credentials in ${displayUrl} are not valid percent-encoding`)
  }
}
