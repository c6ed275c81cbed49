/**
 * `artemis://[user:password@]host[:port]` and `artemis+ssl://…?ca=PATH&cert=PATH&key=PATH` (TLS)
 * → where and how to connect over AMQP 1.0. The only query parameters are the shared TLS ones
 * (shared/tls.ts), and only with artemis+ssl://; any other is refused: a typo would otherwise be
 * ignored without a word.
 */
import {isIP} from 'node:net'

import {UsageError} from '../../errors.js'
import {TLS_PARAMS, type TlsSettings, parseTlsParams} from '../shared/tls.js'

export interface ArtemisTarget {
  host: string
  port: number
  tls: boolean
  /** The TLS options (ca, client certificate, server name, verification) for artemis+ssl://. */
  tlsSettings?: TlsSettings
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
  for (const key of url.searchParams.keys()) {
    if (!TLS_PARAMS.includes(key)) throw new UsageError(`unknown parameter "${key}" in ${displayUrl}: artemis URLs take only the TLS ones (${TLS_PARAMS.join(', ')}) with artemis+ssl://`)
  }
  if (url.pathname !== '' && url.pathname !== '/') throw new UsageError(`${displayUrl} has a path; an artemis:// URL names only the broker (user:password@host:port)`)
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1')
  if (host === '') throw new UsageError(`${displayUrl} names no host`)
  const port = url.port === '' ? (tls ? TLS_PORT : PLAIN_PORT) : Number(url.port)
  const username = decode(url.username, displayUrl)
  const password = decode(url.password, displayUrl)
  const target: ArtemisTarget = {host, port, tls, secrets: [password, url.password].filter((secret) => secret !== '')}
  const tlsSettings = parseTlsParams(url.searchParams, displayUrl, {tls, host, tlsHint: 'artemis+ssl://'})
  if (tlsSettings !== undefined) target.tlsSettings = tlsSettings
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
