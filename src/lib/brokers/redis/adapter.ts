/**
 * Redis reliable-list adapter (ioredis). A queue is the list `<prefix><queue>`; producers
 * RPUSH, consumers move from the head into `<list>:processing`. Bodies are Buffers end to end
 * so they stay byte-exact. Redis lists carry no metadata, so headers (a redriven message's
 * `traceparent`, the replay marker) ride in the SDKs' `__bq_frame` frame (frames.ts): every read
 * unwraps one, every write frames a message that has headers and stores the bare body otherwise.
 */
import {Redis} from 'ioredis'

import {BqError, ConnectionError, UsageError, describeError} from '../../errors.js'
import {BODY_ATTEMPTS} from '../adapter.js'
import type {BrokerAdapter, BrokerMessage, BrowseOptions, Capabilities, DrainOptions, DrainSession, InflightElement, InflightOptions, InflightReport, ListedQueue, OutgoingMessage, ReturnablePage, ReturnablePageOptions} from '../adapter.js'
import {AdapterBase} from '../shared/adapter-base.js'
import {scrubSecrets} from '../shared/redact.js'
import {checkClusterDatabase, checkNotifySlot, clusterUnavailable, confirmOnReplica, connectCluster, isCluster, isClusterNode, sameSlot, scanMasters, stagingBase, type RedisClient} from './cluster.js'
import {RedisDrainSession, chunks, recoverAll, type RedisDrainInit, type RedisKeys} from './drain.js'
import {messageOf, storedOf} from './frames.js'
import {inflightKeys, readInflight, readReturnable, returnElements, type InflightKeys} from './inflight.js'
import {DEFAULT_LOCK_TTL_MS, DrainLock} from './lock.js'
import {clientOptions} from './connection.js'
import {COMMAND_TIMED_OUT, ConnectTimedOut, connectFailure, refusal} from './errors.js'
import {parseRedisUrl, type RedisTarget} from './url.js'
import {checkBrowse} from '../shared/check-arguments.js'

// Headers (and so the replay marker) ride in the SDK frame.
/** Lists bq (and Laravel) keep next to a queue's own list: not queues. */
const BOOKKEEPING_LIST = /:(processing|bq-held|notify)$/

/** Keys that hold a queue's work aside from its list: the SDKs' and bq's lists, Laravel's sorted sets. */
const ASIDE_KEY = /^(.*):(processing|bq-held|reserved|delayed)$/

/** SCAN over every key matching `pattern` (any type), handing each to `take`. */
async function scanAll(client: Pick<Redis, 'scan'>, pattern: string, take: (key: string) => void): Promise<void> {
  let cursor = '0'
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000)
    for (const key of keys) take(key)
    cursor = next
  } while (cursor !== '0')
}

const CAPABILITIES: Capabilities = {truePeek: true, headers: true, bypassMarker: true, delay: false, nativeDlq: false, atomicMove: true, afterCrash: 'staging', parallelBrowse: true}

/** RPUSH commands sent per pipeline round trip (each carries up to SCRIPT_BATCH bodies). */
const PIPELINE_COMMANDS = 64

/**
 * How long connecting may take in all (TCP, TLS, AUTH, the ready check, SELECT of the database)
 * before bq gives up with exit 4: a server that accepts connections and never answers must not
 * hang a command for good. RabbitMQ's connect bound is the same.
 */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000
/**
 * How long one command (or Lua script, or pipeline of them) may wait for Redis's answer, unless
 * the URL says `?timeout=SECONDS`. Script calls carry at most 1,000 messages or 8 MiB (one larger
 * message alone), so a healthy server answers each in well under a second; 30 s leaves room for
 * a slow link without letting a stalled server hang a run.
 */
export const DEFAULT_COMMAND_TIMEOUT_MS = 30_000

export interface RedisAdapterOptions {
  /** How long a drain lock outlives a run that stopped refreshing it (tests shorten it). */
  lockTtlMs?: number
  /** Connect timeout in ms (DEFAULT_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs?: number
  /** Per-command timeout in ms (the URL's `timeout`, else DEFAULT_COMMAND_TIMEOUT_MS). */
  commandTimeoutMs?: number
  /** The name this connection shows in CLIENT LIST (default `bq`). */
  connectionName?: string
  /** The command's warning path (a move on a cluster that cannot be atomic says so once). */
  warn?: (message: string) => void
}

/** Connects (failing fast with a ConnectionError, or an AuthError for refused credentials) and returns the adapter. */
export async function createRedisAdapter(url: URL | string, displayUrl: string, options: RedisAdapterOptions = {}): Promise<BrokerAdapter> {
  const target = parseRedisUrl(url, displayUrl)
  const connectTimeoutMs = options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS
  const commandTimeoutMs = options.commandTimeoutMs ?? target.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS
  const {db} = target.connection
  const options_ = clientOptions(target, {connectTimeoutMs, commandTimeoutMs, connectionName: options.connectionName ?? 'bq'})
  const client = new Redis(options_)
  let active: RedisClient = client
  let lastError: unknown
  client.on('error', (error: unknown) => {
    lastError = error
  })
  let timer: ReturnType<typeof setTimeout> | undefined
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ConnectTimedOut(connectTimeoutMs)), connectTimeoutMs)
  })
  try {
    await Promise.race([
      (async () => {
        await client.connect()
        // A cluster node answers for its own slots only: the cluster client (cluster.ts) follows the rest.
        if (await isClusterNode(client)) {
          checkClusterDatabase(db, displayUrl)
          active = await connectCluster(client, options_, displayUrl, (error) => (lastError = error))
          client.disconnect()
          return
        }
        if (db !== 0) await client.select(db)
      })(),
      timedOut,
    ])
  } catch (error) {
    client.disconnect()
    if (active !== client) active.disconnect()
    if (error instanceof BqError) throw error
    const message = describeError(error)
    if (/DB index is out of range|invalid DB index/i.test(message)) {
      throw new UsageError(`database ${db} does not exist on ${displayUrl} (Redis: ${message.replace(/^ERR\s+/, '')})`)
    }
    throw await connectFailure([error, lastError], {displayUrl, target}, connectTimeoutMs)
  } finally {
    clearTimeout(timer)
  }
  const warn = options.warn ?? ((text: string) => process.stderr.write(`Warning: ${text}\n`))
  return new RedisAdapter(active, displayUrl, target.prefix, target.secrets, options.lockTtlMs ?? DEFAULT_LOCK_TTL_MS, target.notify, commandTimeoutMs, target, warn)
}

class RedisAdapter extends AdapterBase<RedisDrainSession> {
  readonly kind = 'redis'
  readonly capabilities = CAPABILITIES
  readonly binding = BODY_ATTEMPTS
  private warnedNotAtomic = false

  constructor(
    private readonly client: RedisClient,
    displayUrl: string,
    private readonly prefix: string,
    private readonly secrets: string[],
    private readonly lockTtlMs: number,
    /** Keep Laravel's `<list>:notify` in step (url.ts). */
    private readonly notify: boolean,
    private readonly commandTimeoutMs: number,
    /** What the URL said, for refusals that name the user and the keys (errors.ts). */
    private readonly target: RedisTarget,
    private readonly warn: (message: string) => void,
  ) {
    // A session that fails to close leaves messages in the staging lists until recover: say so.
    super(displayUrl, {name: 'Redis', rethrowSessionErrors: true})
  }

  async publish(queue: string, messages: OutgoingMessage[]): Promise<void> {
    const key = this.key(queue, `publish to ${queue}`)
    if (this.notify && isCluster(this.client)) checkNotifySlot(key, queue)
    for (const message of messages) {
      if ((message.delayMs ?? 0) > 0) throw new UsageError(`${this.displayUrl}: Redis lists have no delayed delivery`)
    }
    const batches = chunks(messages.map(storedOf), (stored) => stored.length)
    let accepted = 0
    for (let start = 0; start < batches.length; start += PIPELINE_COMMANDS) {
      const round = batches.slice(start, start + PIPELINE_COMMANDS)
      // With Laravel's notify list the round is one MULTI: elements and wake-up entries land together.
      const pipeline = this.notify ? this.client.multi() : this.client.pipeline()
      for (const batch of round) {
        pipeline.rpush(key, ...batch)
        if (this.notify) pipeline.rpush(`${key}:notify`, ...batch.map(() => '1'))
      }
      const step = this.notify ? 2 : 1
      let results: Array<[Error | null, unknown]> | null
      try {
        results = await pipeline.exec()
      } catch (error) {
        throw this.wrap(`publish to ${queue} (${accepted} of ${messages.length} confirmed)`, error)
      }
      // Every RPUSH must have answered with the new length; anything else is a failure.
      for (let i = 0; i < round.length * step; i++) {
        const [error, reply] = results?.[i] ?? [new Error('no reply'), undefined]
        if (error !== null || typeof reply !== 'number') {
          throw this.wrap(`publish to ${queue} (${accepted} of ${messages.length} confirmed)`, error ?? new Error(`unexpected reply ${String(reply)}`))
        }
        if (i % step === 0) accepted += round[i / step].length
      }
    }
    // On a cluster a confirmed copy must survive a failover before the redrive removes its original.
    if (isCluster(this.client) && messages.length > 0) {
      try {
        await confirmOnReplica(this.client, key, this.replicaWaitMs(), `publish to ${queue}`)
      } catch (error) {
        throw this.wrap(`publish to ${queue} (${accepted} of ${messages.length} written, not confirmed by a replica)`, error)
      }
    }
  }

  async browse(queue: string, options: BrowseOptions): Promise<BrokerMessage[]> {
    const key = this.key(queue, `browse ${queue}`)
    const {limit, offset} = checkBrowse(options)
    if (limit === 0) return []
    try {
      const bodies = await this.client.lrangeBuffer(key, offset, offset + limit - 1)
      return bodies.map((stored, i) => messageOf(stored, String(offset + i)))
    } catch (error) {
      throw this.wrap(`browse ${queue}`, error)
    }
  }

  /**
   * Every list under the prefix, found with SCAN (never KEYS, which blocks the server), without
   * the lists bq keeps next to a queue (`:processing`, `:bq-held`) and Laravel's `:notify`.
   */
  async listQueues(): Promise<ListedQueue[]> {
    this.ensureOpen('list the queues')
    const pattern = `${this.prefix.replace(/[*?[\]\\]/g, '\\$&')}*`
    const found = new Set<string>()
    const client = this.client
    try {
      if (isCluster(client)) {
        // Each master holds the keys of its own slots.
        for (const key of await scanMasters(client, pattern)) if (!BOOKKEEPING_LIST.test(key)) found.add(key.slice(this.prefix.length))
      } else {
        let cursor = '0'
        do {
          const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 1000, 'TYPE', 'list')
          for (const key of keys) if (!BOOKKEEPING_LIST.test(key)) found.add(key.slice(this.prefix.length))
          cursor = next
        } while (cursor !== '0')
      }
    } catch (error) {
      throw this.wrap('list the queues', error)
    }
    return [...found].sort().map((queue) => ({queue}))
  }

  async count(queue: string): Promise<number> {
    const key = this.key(queue, `count ${queue}`)
    try {
      return await this.client.llen(key)
    } catch (error) {
      throw this.wrap(`count ${queue}`, error)
    }
  }

  async queueExists(queue: string): Promise<boolean> {
    const keys = this.keys(queue, `look for ${queue}`)
    try {
      return (await this.client.exists(keys.list, keys.processing)) > 0
    } catch (error) {
      throw this.wrap(`look for ${queue}`, error)
    }
  }

  async drain(queue: string, options: DrainOptions = {}): Promise<DrainSession> {
    const keys = this.keys(queue, `drain ${queue}`)
    const max = options.max ?? 0
    if (!Number.isSafeInteger(max) || max < 0) throw new UsageError(`drain max must be a non-negative integer, got ${max}`)
    const lock = await this.lock(queue, keys)
    let limit: number
    try {
      // A run that crashed left its reservations behind: put them back before counting.
      await recoverAll(this.client, keys, lock.key, lock.token, (what, error) => this.wrap(what, error))
      // The drain never takes more than what was there at start.
      limit = await this.client.llen(keys.list)
    } catch (error) {
      await lock.release().catch(() => undefined)
      throw this.wrap(`start draining ${queue}`, error)
    }
    if (max > 0) limit = Math.min(limit, max)
    return this.track(
      (untrack) =>
        new RedisDrainSession({
          client: this.client,
          queue,
          keys,
          lock,
          limit,
          prefix: this.prefix,
          notify: this.notify,
          wrap: (what, error) => this.wrap(what, error),
          onClose: untrack,
          ...this.clusterMoves(queue, keys),
        }),
    )
  }

  override async recover(queue: string): Promise<number> {
    const keys = this.keys(queue, `recover ${queue}`)
    const lock = await this.lock(queue, keys)
    try {
      return await recoverAll(this.client, keys, lock.key, lock.token, (what, error) => this.wrap(what, error))
    } finally {
      await lock.release().catch(() => undefined)
    }
  }

  async inflight(queue: string, options: InflightOptions): Promise<InflightReport> {
    const keys = this.inflightKeysOf(queue, `read what is in flight on ${queue}`)
    if (!Number.isSafeInteger(options.limit) || options.limit < 0) throw new UsageError(`limit must be a non-negative integer, got ${options.limit}`)
    try {
      return await readInflight(this.client, keys, options.limit)
    } catch (error) {
      throw this.wrap(`read what is in flight on ${queue}`, error)
    }
  }

  /** `<queue>:bq-held`: what a running drain released (or a crashed one left), oldest place first; read with LRANGE, nothing moves. */
  async staged(queue: string, limit: number): Promise<BrokerMessage[]> {
    const keys = this.keys(queue, `read what bq set aside for ${queue}`)
    if (limit <= 0) return []
    try {
      const stored = await this.client.lrangeBuffer(keys.held, 0, limit - 1)
      return stored.map((value, i) => messageOf(value, String(i)))
    } catch (error) {
      throw this.wrap(`read what bq set aside for ${queue}`, error)
    }
  }

  /** Queues whose only keys are in-flight or staging ones (SCAN, any key type), by the names listQueues uses. */
  async queuesAside(): Promise<string[]> {
    this.ensureOpen('list the queues')
    const pattern = `${this.prefix.replace(/[*?[\]\\]/g, '\\$&')}*`
    const found = new Set<string>()
    const take = (key: string) => {
      const match = ASIDE_KEY.exec(key)
      // On a cluster the staging keys may carry a hash tag around the list's name: `{<list>}:processing`.
      if (match !== null) found.add(match[1].replace(/^\{(.*)\}$/, '$1').slice(this.prefix.length))
    }
    const client = this.client
    try {
      if (isCluster(client)) {
        for (const node of client.nodes('master')) await scanAll(node, pattern, take)
      } else {
        await scanAll(client, pattern, take)
      }
    } catch (error) {
      throw this.wrap('list the queues', error)
    }
    return [...found].filter((queue) => queue !== '').sort()
  }

  async returnableInflight(queue: string, options: ReturnablePageOptions): Promise<ReturnablePage> {
    const keys = this.inflightKeysOf(queue, `read what is in flight on ${queue}`)
    try {
      return await readReturnable(this.client, keys, queue, options.before, options.limit)
    } catch (error) {
      throw this.wrap(`read what is in flight on ${queue}`, error)
    }
  }

  async returnInflight(queue: string, elements: InflightElement[]): Promise<boolean[]> {
    const keys = this.inflightKeysOf(queue, `return in-flight work to ${queue}`)
    try {
      return await returnElements(this.client, keys, queue, elements)
    } catch (error) {
      throw this.wrap(`return in-flight work to ${queue}`, error)
    }
  }

  /** The in-flight keys of `queue`: Laravel's `:reserved`/`:delayed` on its layout (a `queues:` prefix or notify=on), else the SDKs' `:processing`. */
  private inflightKeysOf(queue: string, what: string): InflightKeys {
    const list = this.key(queue, what)
    const laravel = this.notify || this.prefix.endsWith('queues:')
    return inflightKeys(list, laravel ? 'laravel' : 'sdk', this.notify)
  }

  protected async release(): Promise<void> {
    await this.client.quit().catch(() => this.client.disconnect())
  }

  private async lock(queue: string, keys: RedisKeys): Promise<DrainLock> {
    try {
      return await DrainLock.acquire(this.client, keys.lock, queue, this.displayUrl, this.lockTtlMs)
    } catch (error) {
      throw this.wrap(`lock ${queue}`, error)
    }
  }

  /** The list of `queue`, once the call (`what`) is allowed. */
  private key(queue: string, what: string): string {
    this.check(queue, what)
    return this.prefix + queue
  }

  private keys(queue: string, what: string): RedisKeys {
    const list = this.key(queue, what)
    // On a cluster the staging keys share the list's hash slot (cluster.ts); a single server keeps the binding's names.
    let base = list
    if (isCluster(this.client)) {
      base = stagingBase(list, queue)
      if (this.notify) checkNotifySlot(list, queue)
    }
    return {list, processing: `${base}:processing`, held: `${base}:bq-held`, lock: `${base}:bq-lock`, ...(this.notify ? {notify: `${list}:notify`} : {})}
  }

  /**
   * On a cluster: which moves out of this drain can be one script (the target's keys share the
   * DLQ's slot), and the replica confirmation its removals need on the at-least-once path. The
   * first move that cannot be atomic says so once per run.
   */
  private clusterMoves(queue: string, keys: RedisKeys): Pick<RedisDrainInit, 'atomicTo' | 'confirmRemoval'> {
    const client = this.client
    if (!isCluster(client)) return {}
    return {
      atomicTo: (target) => {
        const targetList = this.prefix + target
        if (sameSlot([keys.processing, targetList, ...(this.notify ? [`${targetList}:notify`] : [])])) return true
        if (!this.warnedNotAtomic) {
          this.warnedNotAtomic = true
          this.warn(
            `${queue} and ${target} are in different hash slots of the Redis Cluster at ${this.displayUrl}, so moves between them are not atomic: each copy is confirmed on ${target} (and a replica) before its original is removed from ${queue}, and a failure in between may leave a message on both (counted as possible_duplicates). Hash-tag both names (for example {orders} and {orders}.dlq) to keep moves atomic`,
          )
        }
        return false
      },
      confirmRemoval: () => confirmOnReplica(client, keys.processing, this.replicaWaitMs(), `removal from ${queue}`),
    }
  }

  /** How long a write on a cluster waits for a replica's confirmation: well inside the command timeout. */
  private replicaWaitMs(): number {
    return Math.max(100, Math.min(10_000, Math.floor(this.commandTimeoutMs / 2)))
  }

  /** One-line, redacted error for a failed operation; a lost connection is a ConnectionError (exit 4). */
  private wrap(what: string, error: unknown): Error {
    if (error instanceof BqError) return error
    const message = scrubSecrets(describeError(error), this.secrets)
    if (message.startsWith('BQLOCK')) {
      return new BqError(
        `cannot ${what}: the drain lock was lost (it expired or another run took it); messages this run held are safe in the :processing/:bq-held lists of ${this.displayUrl}, run recover`,
        {cause: error},
      )
    }
    if (message === COMMAND_TIMED_OUT) {
      // The server stopped answering: what it did with the command is unknown, so nothing more is
      // sent on this connection (every later call fails at once instead of waiting as long again).
      // A drain's reservations stay in :processing / :bq-held for the next run or recover.
      this.client.disconnect()
      return new ConnectionError(`Redis at ${this.displayUrl} did not answer within ${this.commandTimeoutMs / 1000} s (could not ${what}); set --timeout SECONDS (or ?timeout= on the URL) to wait longer`, error)
    }
    // A ReplyError is Redis answering; anything else from the client is the connection failing,
    // and so is a cluster that cannot serve the slot now (a master down, a failover under way).
    const isReply = (error as {name?: string} | undefined)?.name === 'ReplyError'
    const refused = isReply ? refusal(what, error, {displayUrl: this.displayUrl, target: this.target}) : undefined
    if (refused !== undefined) return refused
    if (!isReply || clusterUnavailable(message)) return new ConnectionError(`lost the connection to ${this.displayUrl} (could not ${what}): ${message}`, error)
    return new BqError(`cannot ${what} on ${this.displayUrl}: ${message}`, {cause: error})
  }
}
