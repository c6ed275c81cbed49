/**
 * Redis Cluster: detecting it, the cluster client, and the hash-slot rules bq keeps there.
 *
 * bq connects to the node the URL names as it does to any Redis; when that node says it is part
 * of a cluster (INFO cluster: `cluster_enabled:1`), bq opens ioredis's Cluster client from that
 * node with the very same per-node options (credentials, TLS, timeouts), so MOVED and ASK are
 * followed by the client and never reach the operator.
 *
 * A script may only touch keys of one hash slot. The staging keys bq keeps next to a list K
 * (`:processing`, `:bq-held`, `:bq-lock`) are named from K so they share its slot: `K:processing`
 * when K is hash-tagged (`{orders}.dlq:processing`, the binding's name), `{K}:processing` when K
 * has no hash tag (its slot is the hash of all of K, which the tag `{K}` reproduces). A move whose
 * target lives in another slot cannot be one script: the redrive engine then takes its
 * at-least-once path (DrainSession.atomicTo), and every write it relies on is confirmed by a
 * replica (WAIT) before the next step, so a failover cannot undo a confirmed copy or removal.
 */
import {Cluster, type Redis, type RedisOptions} from 'ioredis'

import {AuthError, ConnectionError, UsageError, describeError} from '../../errors.js'

/** The client a Redis adapter works with: one server, or a cluster. */
export type RedisClient = Redis | Cluster

export function isCluster(client: RedisClient): client is Cluster {
  return client instanceof Cluster
}

/** True when the server `probe` is connected to is a cluster node. */
export async function isClusterNode(probe: Redis): Promise<boolean> {
  try {
    return /^cluster_enabled:1\s*$/m.test(await probe.info('cluster'))
  } catch (error) {
    // A user without +info may still run CLUSTER INFO; a server without cluster support refuses it.
    if (!/NOPERM/.test(describeError(error))) throw error
    try {
      await probe.call('CLUSTER', 'INFO')
      return true
    } catch {
      return false
    }
  }
}

/**
 * Opens the cluster client from the node `probe` reached, with the same per-node options. Throws
 * what ioredis threw; the caller turns it into a one-line ConnectionError.
 */
export async function connectCluster(probe: Redis, nodeOptions: RedisOptions, displayUrl: string, onError: (error: unknown) => void): Promise<Cluster> {
  await checkWaitAllowed(probe, displayUrl)
  // ioredis would wait for a failed cluster to recover (its ready check reconnects until the
  // connect timeout ends it, with a misleading "no answer"): say what is wrong at once.
  const state = /^cluster_state:(\w+)/m.exec(String(await probe.call('CLUSTER', 'INFO')))?.[1]
  if (state === 'fail') {
    throw new ConnectionError(`the Redis Cluster of ${displayUrl} is down (CLUSTERDOWN: cluster_state:fail, some hash slots have no reachable master); nothing was changed: run again once a replica has taken over or the node is back`)
  }
  // ioredis sets the node connections' own retry (none) and offline queue (on, while a node's
  // first connection opens: nodes are connected on first use) itself.
  const {host, port, db, lazyConnect, retryStrategy, enableOfflineQueue, ...perNode} = nodeOptions
  void [db, lazyConnect, retryStrategy, enableOfflineQueue]
  const cluster = new Cluster([{host: probe.options.host ?? host, port: probe.options.port ?? port}], {
    // Every node gets the URL's credentials, TLS settings and timeouts.
    redisOptions: perNode,
    lazyConnect: true,
    enableOfflineQueue: false,
    enableReadyCheck: true,
    scaleReads: 'master',
    // Redirections are safe to follow (the command did not run); nothing else is retried behind
    // the caller's back: a resent RPUSH could duplicate messages. A lost master or CLUSTERDOWN
    // fails the operation (exit 4 with the run's report); a rerun after the failover finishes it.
    clusterRetryStrategy: () => null,
    retryDelayOnFailover: 0,
    retryDelayOnClusterDown: 0,
    retryDelayOnTryAgain: 100,
    slotsRefreshTimeout: nodeOptions.connectTimeout ?? 10_000,
    // The TLS server name is the URL's host, not the address a node announces.
    dnsLookup: (address, callback) => callback(null, address),
  })
  cluster.on('error', onError)
  try {
    await cluster.connect()
  } catch (error) {
    cluster.disconnect()
    throw error
  }
  return cluster
}

/**
 * Every write bq builds on waits for a replica (confirmOnReplica): a user that may not run WAIT is
 * told so before anything runs, not after a copy was written. `WAIT 0 0` returns at once.
 */
async function checkWaitAllowed(probe: Redis, displayUrl: string): Promise<void> {
  try {
    await probe.call('WAIT', 0, 0)
  } catch (error) {
    const message = describeError(error)
    if (/NOPERM/.test(message)) throw new AuthError(`the user of ${displayUrl} may not run WAIT, which bq needs on a Redis Cluster to have each write confirmed by a replica: add +wait to its ACL (Redis: ${message})`, 'permission', error)
    // A replica refuses WAIT itself (after the ACL check): the writes go to masters anyway.
  }
}

/** Redis Cluster has one database: a URL naming another is a usage error, said before anything runs. */
export function checkClusterDatabase(db: number | undefined, displayUrl: string): void {
  if (db !== undefined && db !== 0) throw new UsageError(`${displayUrl} is a Redis Cluster node, and a cluster has only database 0: drop /${db} from the URL`)
}

/**
 * Replies that mean the cluster cannot serve the slot right now (a master is down, a failover or
 * resharding is under way): the connection's fault, not the command's (exit 4).
 */
export function clusterUnavailable(message: string): boolean {
  return /^(CLUSTERDOWN|TRYAGAIN|MASTERDOWN|LOADING)\b|Too many Cluster redirections|Cluster isn't ready|None of startup nodes is available|Failed to refresh slots cache/.test(message)
}

/** The part of a key Redis Cluster hashes: the first non-empty `{…}`, else the whole key. */
export function hashedPart(key: string): string {
  const open = key.indexOf('{')
  if (open >= 0) {
    const close = key.indexOf('}', open + 1)
    if (close > open + 1) return key.slice(open + 1, close)
  }
  return key
}

/** The hash slot of a key (CRC16/XMODEM of its hashed part, mod 16384). */
export function keySlot(key: string): number {
  let crc = 0
  for (const byte of Buffer.from(hashedPart(key))) {
    crc ^= byte << 8
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff
  }
  return crc % 16_384
}

export function sameSlot(keys: string[]): boolean {
  return keys.every((key) => keySlot(key) === keySlot(keys[0]))
}

/**
 * The name bq's staging keys of list K start with on a cluster: K itself when `K:…` shares K's
 * slot (K is hash-tagged), else `{K}`. A name no staging key can share a slot with (an untagged
 * name holding `}`) cannot be drained on a cluster.
 */
export function stagingBase(list: string, queue: string): string {
  if (keySlot(`${list}:processing`) === keySlot(list)) return list
  if (keySlot(`{${list}}:processing`) === keySlot(list)) return `{${list}}`
  throw new UsageError(`queue ${queue} cannot be drained on a Redis Cluster: bq keeps its reserved messages in keys of the queue's own hash slot, and no key can share the slot of a name with "}" but no hash tag; give it a hash tag such as {${queue.replace(/[{}]/g, '')}}`)
}

/** The URL's Laravel `:notify` list must share its queue's slot for one MULTI/script to keep it in step. */
export function checkNotifySlot(list: string, queue: string): void {
  if (keySlot(`${list}:notify`) === keySlot(list)) return
  throw new UsageError(`queue ${queue} and its Laravel wake-up list ${list}:notify are in different hash slots of the Redis Cluster, so bq cannot keep them in step: hash-tag the queue name (queues:{${queue}}), as Laravel on a cluster needs anyway, or add notify=off to the URL`)
}

/**
 * Waits until a replica of `key`'s master has every write this client sent that master so far
 * (WAIT runs on the same connection as the writes; the pipeline's keyed command routes it
 * there). A master without replicas has nothing to wait for. Throws a ConnectionError when no
 * replica confirms in time: the write may be lost in a failover, so the caller must not build on it.
 */
export async function confirmOnReplica(cluster: Cluster, key: string, timeoutMs: number, what: string): Promise<void> {
  const replicas = (cluster.slots[keySlot(key)]?.length ?? 1) - 1
  if (replicas <= 0) return
  let acked: unknown
  try {
    const results = await cluster.pipeline().exists(key).wait(1, timeoutMs).exec()
    const [error, reply] = results?.[1] ?? [new Error('no reply'), 0]
    if (error) throw error
    acked = reply
  } catch (error) {
    // The write itself went through: whatever kept its confirmation, the caller must treat it as
    // possibly applied (a copy possibly on the target), which is what a lost connection means.
    throw new ConnectionError(`could not have the ${what} confirmed by a replica of the Redis Cluster master for ${key}: ${describeError(error)}`, error)
  }
  if (typeof acked !== 'number' || acked < 1) {
    throw new ConnectionError(`no replica of the Redis Cluster master for ${key} confirmed the ${what} within ${timeoutMs / 1000} s (a failover may be under way)`)
  }
}

/** Every list key under `pattern` on every master (SCAN TYPE list, never KEYS). */
export async function scanMasters(cluster: Cluster, pattern: string): Promise<string[]> {
  const found: string[] = []
  for (const node of cluster.nodes('master')) {
    let cursor = '0'
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000, 'TYPE', 'list')
      found.push(...keys)
      cursor = next
    } while (cursor !== '0')
  }
  return found
}
