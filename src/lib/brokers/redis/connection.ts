/**
 * A parsed Redis URL (url.ts) → ioredis options. `nodeOptions` is what every connection to one
 * Redis server takes, whoever makes it (bq's client, the connection to the master a sentinel
 * names, each node of a cluster); `clientOptions` adds where to connect.
 */
import type {RedisOptions} from 'ioredis'

import type {RedisTarget} from './url.js'

export interface ConnectionLimits {
  /** How long connecting may take (TCP, TLS, AUTH, the ready check). */
  connectTimeoutMs: number
  /** How long one command may wait for its answer. */
  commandTimeoutMs: number
  /** The name the connection shows in CLIENT LIST. */
  connectionName: string
}

/** Credentials, TLS, timeouts and the no-retry policy of one connection to one Redis server. */
export function nodeOptions(target: RedisTarget, limits: ConnectionLimits): RedisOptions {
  const {username, password} = target.connection
  return {
    ...(username === undefined ? {} : {username}),
    ...(password === undefined ? {} : {password}),
    ...(target.tls === undefined ? {} : {tls: {...target.tls.options}}),
    connectionName: limits.connectionName,
    connectTimeout: limits.connectTimeoutMs,
    commandTimeout: limits.commandTimeoutMs,
    // A CLI run does not reconnect or replay commands behind the caller's back: a resent RPUSH
    // could duplicate messages. A dropped connection fails the operation; drains are recoverable.
    retryStrategy: () => null,
    autoResendUnfulfilledCommands: false,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
  }
}

/**
 * The options of bq's client: one server, or the master the sentinels name (asked once per run:
 * a run that loses its master fails, and the next run asks again). Database 0: the adapter
 * selects the URL's database itself, because ioredis's own SELECT reports a bad index only as an
 * 'error' event and goes on in database 0.
 */
export function clientOptions(target: RedisTarget, limits: ConnectionLimits): RedisOptions {
  const node = nodeOptions(target, limits)
  const {sentinel} = target
  if (sentinel === undefined) return {...node, host: target.connection.host, port: target.connection.port, db: 0, lazyConnect: true}
  return {
    ...node,
    db: 0,
    lazyConnect: true,
    sentinels: sentinel.sentinels.map(({host, port}) => ({host, port})),
    name: sentinel.masterName,
    role: 'master',
    ...(sentinel.username === undefined ? {} : {sentinelUsername: sentinel.username}),
    ...(sentinel.password === undefined ? {} : {sentinelPassword: sentinel.password}),
    ...(target.tls === undefined ? {} : {sentinelTLS: {...target.tls.options}, enableTLSForSentinelMode: true}),
    // Every sentinel is tried once, then the connect fails (ioredis would otherwise retry for good).
    sentinelRetryStrategy: () => null,
    sentinelCommandTimeout: limits.commandTimeoutMs,
    // The sentinels' list of each other is not needed: the URL names them, and a run is short.
    updateSentinels: false,
  }
}
