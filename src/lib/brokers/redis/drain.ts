/**
 * A drain over one Redis list K. Reservations move to `K:processing` (the binding's list, so a
 * crash leaves them where operators and `recover()` look); released messages move to
 * `K:bq-held` so this run never takes them again; close puts held and un-acked messages back at
 * K's head in their original order. Every step is a fenced Lua script (see scripts.ts).
 *
 * Once the caller streams (a second next()), the session reads ahead: as it hands out a batch it
 * reserves the following one with the same fenced script, so the caller's work on the current
 * batch overlaps the round trip. What is read ahead sits in `K:processing` like any reservation
 * (a crash leaves it where `recover()` finds it), counts toward the limit (never more than the
 * run may take), and goes back to K's head in its original place at close if it was never handed
 * out. A first call takes no more than it asked for, so a one-off look reserves nothing extra.
 *
 * Memory stays bounded: the session keeps the bodies of messages it reserved and has not settled
 * (the batch the caller holds, plus at most one batch read ahead) and, for released ones, only
 * their sequence numbers. They are the elements exactly as stored (a frame stays a frame, so the
 * scripts find it); handing one out unwraps it (frames.ts).
 */
import {BqError} from '../../errors.js'
import type {DrainSession, OutgoingMessage, ReservedMessage} from '../adapter.js'
import type {RedisClient} from './cluster.js'
import {splitBatches} from '../shared/batching.js'
import {messageOf, storedOf} from './frames.js'
import type {DrainLock} from './lock.js'
import {ACK, MOVE, RECOVER, RELEASE, RESERVE, RESTORE, runScript, type Script} from './scripts.js'
import {checkQueue} from '../shared/check-arguments.js'
import {DrainGuard} from '../shared/drain-guard.js'

/** Script calls carry at most this many messages or bytes, so no single call stalls Redis. */
export const SCRIPT_BATCH = 1000
export const SCRIPT_BYTES = 8 * 1024 * 1024
/** The most held messages one RESTORE op moves. */
const HELD_RUN = 10_000

interface Handle {
  session: RedisDrainSession
  /** The message's position in K when the drain started (0 = head): its original order. */
  seq: number
}

export interface RedisKeys {
  list: string
  processing: string
  held: string
  /** The drain lock (lock.ts). */
  lock: string
  /** Laravel's `K:notify`, when the URL keeps it in step (url.ts `notify`). */
  notify?: string
}

export interface RedisDrainInit {
  client: RedisClient
  queue: string
  keys: RedisKeys
  lock: DrainLock
  /** How many messages this run may take: LLEN at start, capped by `max`. */
  limit: number
  prefix: string
  /** Keep a target's `:notify` list in step with what a move adds (url.ts `notify`). */
  notify: boolean
  /** Wraps client errors into BqError/ConnectionError with the redacted URL. */
  wrap(what: string, error: unknown): Error
  onClose(): void
  /** A cluster only: false when a move to this queue cannot be one script (another hash slot). */
  atomicTo?(targetQueue: string): boolean
  /** A cluster only: waits until a replica has this run's removals, before the run builds on them. */
  confirmRemoval?(): Promise<void>
}

export class RedisDrainSession implements DrainSession {
  /** One connection runs the session's scripts in the order they were sent. */
  readonly nextWhileSettling = true
  /** Messages reserved so far (handed out or read ahead); the next one reserved gets this seq. */
  private taken = 0
  /** Messages handed out so far: seqs from here up to `taken` are read ahead, not handed out yet. */
  private handedOut = 0
  /** Reserved and not yet settled, in ascending seq order (so in `K:processing` order): seq → body. */
  private readonly inFlight = new Map<number, Buffer>()
  /** The read-ahead reservation in flight, if any; it never rejects (see `readError`). */
  private reading: Promise<void> | undefined
  /** Why the last read-ahead failed; the next call to next() throws it. */
  private readError: Error | undefined
  private calls = 0
  /** Sequence numbers of the held list's entries, ascending, mirroring its order on the server. */
  private readonly heldSeqs: number[] = []
  /** False once the server and this mirror may disagree; close then falls back to recovery order. */
  private consistent = true
  private readonly guard: DrainGuard<Handle>

  constructor(private readonly init: RedisDrainInit) {
    this.guard = new DrainGuard(this, `Redis drain of "${init.queue}"`, init.onClose)
  }

  async next(max: number): Promise<ReservedMessage[]> {
    const size = this.guard.checkNext(max)
    await this.awaitReadAhead()
    const out: ReservedMessage[] = []
    while (out.length < size && this.handedOut < this.taken) out.push(this.handOut(this.handedOut++))
    const want = Math.min(size - out.length, this.init.limit - this.taken)
    if (want > 0) {
      // A failure leaves what was already taken from the read-ahead in flight: close returns it.
      await this.reserve(want)
      while (this.handedOut < this.taken) out.push(this.handOut(this.handedOut++))
    }
    // Read ahead once the caller streams (a second call) and only while the queue keeps up: a
    // short batch means the queue ran dry. At most one batch is ever reserved ahead.
    if (this.calls++ > 0 && out.length === size) this.readAhead(Math.min(size - (this.taken - this.handedOut), this.init.limit - this.taken))
    return out
  }

  /** Moves up to `want` messages from K's head to processing and keeps their bodies in flight. */
  private async reserve(want: number): Promise<void> {
    const {keys, lock} = this.init
    const reply = await this.script(RESERVE, 'reserve messages', withNotify([lock.key, keys.list, keys.processing], keys), [want])
    if (!Array.isArray(reply) || !reply.every((item) => Buffer.isBuffer(item))) {
      this.consistent = false
      throw new BqError('unexpected reply from Redis while reserving messages')
    }
    for (const body of reply as Buffer[]) this.inFlight.set(this.taken++, body)
  }

  private readAhead(want: number): void {
    if (want <= 0) return
    this.reading = this.reserve(want).then(
      () => undefined,
      (error: unknown) => {
        this.readError = error instanceof Error ? error : new BqError(String(error))
      },
    )
  }

  /** Waits for the read-ahead in flight; throws (once) why it failed. */
  private async awaitReadAhead(): Promise<void> {
    if (this.reading !== undefined) {
      await this.reading
      this.reading = undefined
    }
    const error = this.readError
    if (error !== undefined) {
      this.readError = undefined
      throw error
    }
  }

  private handOut(seq: number): ReservedMessage {
    const handle: Handle = {session: this, seq}
    return {...messageOf(this.body(seq), String(seq)), handle}
  }

  async ack(messages: ReservedMessage[]): Promise<void> {
    const seqs = this.seqs(messages, 'ack')
    for (const chunk of chunks(seqs, (seq) => this.body(seq).length)) {
      const missing = await this.script(ACK, 'ack messages', [this.init.lock.key, this.init.keys.processing], chunk.map((seq) => this.body(seq)))
      for (const seq of chunk) this.inFlight.delete(seq)
      if (missing !== 0) {
        this.consistent = false
        throw new BqError(`${String(missing)} acked message(s) were no longer in ${this.init.keys.processing}; another client changed it during the drain`)
      }
    }
    if (this.init.confirmRemoval !== undefined && seqs.length > 0) {
      try {
        await this.init.confirmRemoval()
      } catch (error) {
        throw this.init.wrap('confirm the removals on a replica', error)
      }
    }
  }

  atomicTo(targetQueue: string): boolean {
    return this.init.atomicTo?.(targetQueue) ?? true
  }

  async moveAtomically(sources: ReservedMessage[], targetQueue: string, outgoing: OutgoingMessage[]): Promise<void> {
    this.guard.checkOpen('move')
    checkQueue(targetQueue, 'redis')
    for (const message of outgoing) {
      if ((message.delayMs ?? 0) > 0) throw new BqError('redis has no delayed delivery')
    }
    const seqs = this.seqs(sources, 'move')
    const target = this.init.prefix + targetQueue
    if (target === this.init.keys.list) throw new BqError(`cannot move messages from ${this.init.queue} to itself`)
    if (!this.atomicTo(targetQueue)) throw new BqError(`cannot move messages from ${this.init.queue} to ${targetQueue} in one step: they are in different hash slots`)
    // One script: the copies land in the target if and only if the sources leave processing.
    const keys = [this.init.lock.key, this.init.keys.processing, target]
    if (this.init.notify) keys.push(`${target}:notify`)
    await this.script(MOVE, `move messages to ${targetQueue}`, keys, [seqs.length, ...seqs.map((seq) => this.body(seq)), ...outgoing.map(storedOf)])
    for (const seq of seqs) this.inFlight.delete(seq)
  }

  async release(messages: ReservedMessage[]): Promise<void> {
    const seqs = this.seqs(messages, 'release')
    for (const chunk of chunks(seqs, (seq) => this.body(seq).length)) {
      const args: Array<number | Buffer> = []
      const mirror = [...this.heldSeqs]
      for (const seq of chunk) {
        const at = insertionIndex(mirror, seq)
        mirror.splice(at, 0, seq)
        args.push(at, this.body(seq))
      }
      const missing = await this.script(RELEASE, 'release messages', [this.init.lock.key, this.init.keys.processing, this.init.keys.held], args)
      this.heldSeqs.splice(0, this.heldSeqs.length, ...mirror)
      for (const seq of chunk) this.inFlight.delete(seq)
      if (missing !== 0) {
        this.consistent = false
        throw new BqError(`${String(missing)} released message(s) were no longer in ${this.init.keys.processing}; another client changed it during the drain`)
      }
    }
  }

  async close(): Promise<void> {
    const {lock} = this.init
    return this.guard.close(async () => {
      lock.stopRefreshing()
      // What a read-ahead reserved is returned with the rest; a failed one makes the mirror untrusted.
      await this.reading
      this.reading = undefined
      this.readError = undefined
      if (this.consistent) await this.restoreInOrder()
      else await recoverAll(this.init.client, this.init.keys, lock.key, lock.token, (what, error) => this.init.wrap(what, error))
      this.inFlight.clear()
      this.heldSeqs.length = 0
      await lock.release().catch((error: unknown) => {
        throw this.init.wrap('release the drain lock', error)
      })
    })
  }

  /** Puts held, un-acked and read-ahead messages back at K's head, last one first, so their order is the original. */
  private async restoreInOrder(): Promise<void> {
    const pending = [...this.inFlight.entries()].sort((a, b) => b[0] - a[0])
    const ops: Array<['H', number] | ['P', Buffer]> = []
    let h = this.heldSeqs.length - 1
    let p = 0
    while (h >= 0 || p < pending.length) {
      if (p < pending.length && (h < 0 || pending[p][0] > this.heldSeqs[h])) {
        ops.push(['P', pending[p++][1]])
        continue
      }
      let run = 0
      while (h >= 0 && run < HELD_RUN && (p >= pending.length || this.heldSeqs[h] > pending[p][0])) {
        h--
        run++
      }
      ops.push(['H', run])
    }
    const {lock, keys} = this.init
    for (const chunk of chunks(ops, (op) => (op[0] === 'P' ? op[1].length : 16))) {
      const missing = await this.script(RESTORE, 'return messages to the queue', withNotify([lock.key, keys.list, keys.processing, keys.held], keys), chunk.flat())
      if (missing !== 0) throw new BqError(`${String(missing)} message(s) to return were no longer in ${keys.processing} or ${keys.held}; another client changed them during the drain`)
    }
  }

  private body(seq: number): Buffer {
    const body = this.inFlight.get(seq)
    if (body === undefined) throw new BqError(`message ${seq} of the drain of ${this.init.queue} was already settled`)
    return body
  }

  /** The sequence numbers behind handles this session gave out and has not settled. */
  private seqs(messages: ReservedMessage[], action: string): number[] {
    return this.guard.claim(messages, action, (handle) => (this.inFlight.has(handle.seq) ? handle.seq : undefined))
  }

  private async script(s: Script, what: string, keys: string[], args: Array<string | Buffer | number>): Promise<unknown> {
    try {
      return await runScript(this.init.client, s, keys, [this.init.lock.token, ...args])
    } catch (error) {
      // The script may or may not have run (a lost reply): stop trusting the local mirror.
      this.consistent = false
      throw this.init.wrap(what, error)
    }
  }
}

/**
 * Crash recovery: returns everything in processing, then everything held, to K's head, in
 * chunks so no single script stalls Redis. Call with the lock held.
 */
export async function recoverAll(client: RedisClient, keys: RedisKeys, lockKey: string, token: string, wrap: (what: string, error: unknown) => Error): Promise<number> {
  let total = 0
  for (;;) {
    let moved: unknown
    try {
      moved = await runScript(client, RECOVER, withNotify([lockKey, keys.list, keys.processing, keys.held], keys), [token, HELD_RUN])
    } catch (error) {
      throw wrap('recover reserved messages', error)
    }
    const n = Number(moved)
    total += n
    if (n < HELD_RUN) return total
  }
}

/** A script's keys, plus K's notify list last when it is kept in step. */
function withNotify(scriptKeys: string[], keys: RedisKeys): string[] {
  return keys.notify === undefined ? scriptKeys : [...scriptKeys, keys.notify]
}

/** The index at which `seq` keeps `sorted` ascending. */
function insertionIndex(sorted: number[], seq: number): number {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if (sorted[mid] < seq) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** Splits items into script-sized groups by count and bytes. */
export function chunks<T>(items: T[], size: (item: T) => number): T[][] {
  return splitBatches(items, size, SCRIPT_BATCH, SCRIPT_BYTES)
}
