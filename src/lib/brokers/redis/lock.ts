/**
 * The per-queue drain lock (`K:bq-lock`): one drain or recovery at a time per list. The value
 * names its owner (host, pid, start time, random token), is refreshed while the run lives and
 * expires when it stops refreshing. A lock whose owner is a dead process on this host is taken
 * over at once, so a crashed run can be recovered without waiting for the expiry.
 */
import {randomBytes} from 'node:crypto'

import {UsageError} from '../../errors.js'
import type {RedisClient} from './cluster.js'
import {describeOwner, ownerIsDead, thisHost, type DrainOwner} from '../shared/liveness.js'
import {LOCK_DELETE, LOCK_REFRESH, runScript} from './scripts.js'

export const DEFAULT_LOCK_TTL_MS = 30_000

export class DrainLock {
  private timer: ReturnType<typeof setInterval> | undefined
  /** Set when a refresh found the lock gone or taken; the scripts refuse such a run anyway. */
  lost = false

  private constructor(
    private readonly client: RedisClient,
    readonly key: string,
    /** The exact value stored; the scripts compare against it. */
    readonly token: string,
    private readonly ttlMs: number,
  ) {}

  /** Takes the lock for `key`, or throws a UsageError naming the live owner. */
  static async acquire(client: RedisClient, key: string, queue: string, displayUrl: string, ttlMs = DEFAULT_LOCK_TTL_MS): Promise<DrainLock> {
    const owner: DrainOwner = {host: thisHost(), pid: process.pid, since: Date.now()}
    const token = JSON.stringify({...owner, token: randomBytes(12).toString('hex')})
    for (let attempt = 0; attempt < 2; attempt++) {
      if ((await client.set(key, token, 'PX', ttlMs, 'NX')) === 'OK') {
        const lock = new DrainLock(client, key, token, ttlMs)
        lock.startRefreshing()
        return lock
      }
      const current = await client.get(key)
      if (current === null) continue // expired between the two calls
      const holder = parseOwner(current)
      if (attempt === 0 && holder !== undefined && ownerIsDead(holder)) {
        // Compare-and-delete: only the exact stale value goes, never a lock someone just took.
        await runScript(client, LOCK_DELETE, [key], [current])
        continue
      }
      const ttl = await client.pttl(key)
      const who = holder === undefined ? 'another client' : describeOwner(holder)
      const expiry = ttl > 0 ? `; the lock ${key} expires in ${Math.ceil(ttl / 1000)}s unless renewed` : ''
      throw new UsageError(`queue ${queue} on ${displayUrl} is being drained by ${who}${expiry}`, 'busy')
    }
    throw new UsageError(`could not take the drain lock ${key} for queue ${queue} on ${displayUrl}; try again`, 'busy')
  }

  /** Stops refreshing and deletes the lock if it is still ours. */
  async release(): Promise<void> {
    this.stopRefreshing()
    await runScript(this.client, LOCK_DELETE, [this.key], [this.token])
  }

  stopRefreshing(): void {
    if (this.timer !== undefined) clearInterval(this.timer)
    this.timer = undefined
  }

  private startRefreshing(): void {
    this.timer = setInterval(() => {
      runScript(this.client, LOCK_REFRESH, [this.key], [this.token, this.ttlMs]).then(
        (result) => {
          if (result !== 1) {
            this.lost = true
            this.stopRefreshing()
          }
        },
        // A failed refresh (connection trouble) is retried next tick; the lock may then expire,
        // and the fenced scripts refuse to act without it.
        () => undefined,
      )
    }, Math.max(100, Math.floor(this.ttlMs / 3)))
    // The refresh must never be what keeps the process alive.
    this.timer.unref()
  }
}

function parseOwner(value: string): DrainOwner | undefined {
  try {
    const parsed = JSON.parse(value) as Partial<DrainOwner>
    if (typeof parsed.host === 'string' && typeof parsed.pid === 'number') return {host: parsed.host, pid: parsed.pid, since: Number(parsed.since)}
  } catch {
    // Not a bq lock value: treat its owner as unknown (and alive).
  }
  return undefined
}
