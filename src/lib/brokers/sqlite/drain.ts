/**
 * A drain session on the embedded store. Reserving marks rows with the session id instead of
 * moving them, so a message keeps its id — and so its place in the queue — until it is acked.
 * Releasing changes nothing on disk: released rows stay reserved (this run never sees them
 * again) and become visible at close, in their original order.
 */
import {BqError, describeError} from '../../errors.js'
import type {DrainSession, OutgoingMessage, ReservedMessage} from '../adapter.js'
import {insertAll, toBrokerMessage} from './rows.js'
import type {SqliteStore} from './store.js'
import {checkQueue} from '../shared/check-arguments.js'
import {DrainGuard} from '../shared/drain-guard.js'

interface Handle {
  session: SqliteDrainSession
  id: number
}

export interface SqliteDrainInit {
  store: SqliteStore
  queue: string
  sessionId: number
  startedAt: number
  /** The highest ready id when the drain started: later messages are not part of this run. */
  lastId: number
  /** 0 = no limit beyond `lastId`. */
  max: number
  describe: string
  onClose(): void
}

export class SqliteDrainSession implements DrainSession {
  private taken = 0
  /** Ids handed out and neither acked, moved nor released. */
  private readonly inFlight = new Set<number>()
  private readonly guard: DrainGuard<Handle>

  constructor(private readonly init: SqliteDrainInit) {
    this.guard = new DrainGuard(this, `SQLite drain of "${init.queue}"`, init.onClose)
  }

  async next(max: number): Promise<ReservedMessage[]> {
    let want = this.guard.checkNext(max)
    if (this.init.max > 0) want = Math.min(want, this.init.max - this.taken)
    if (want <= 0) return []
    const {store, queue, sessionId, lastId, startedAt} = this.init
    const rows = this.run('reserve messages', () => store.write(() => store.reserve(queue, sessionId, lastId, startedAt, want, Date.now())))
    this.taken += rows.length
    return rows.map((row) => {
      this.inFlight.add(row.id)
      const handle: Handle = {session: this, id: row.id}
      return {...toBrokerMessage(row), handle}
    })
  }

  async ack(messages: ReservedMessage[]): Promise<void> {
    const ids = this.ids(messages, 'ack')
    this.run('ack messages', () => this.init.store.write(() => this.deleteAll(ids)))
    for (const id of ids) this.inFlight.delete(id)
  }

  async moveAtomically(sources: ReservedMessage[], targetQueue: string, outgoing: OutgoingMessage[]): Promise<void> {
    this.guard.checkOpen('move')
    checkQueue(targetQueue, this.init.describe)
    const ids = this.ids(sources, 'move')
    // One transaction: the copies exist in the target if and only if the sources are gone.
    this.run(`move messages to ${targetQueue}`, () =>
      this.init.store.write(() => {
        insertAll(this.init.store, targetQueue, outgoing, Date.now())
        this.deleteAll(ids)
      }),
    )
    for (const id of ids) this.inFlight.delete(id)
  }

  async release(messages: ReservedMessage[]): Promise<void> {
    // Nothing to write: the rows stay reserved by this session until close.
    for (const id of this.ids(messages, 'release')) this.inFlight.delete(id)
  }

  async close(): Promise<void> {
    const {store, sessionId} = this.init
    return this.guard.close(async () => {
      this.run('return reserved messages', () =>
        store.write(() => {
          store.unreserveSession(sessionId)
          store.deleteSession(sessionId)
        }),
      )
    })
  }

  private deleteAll(ids: number[]): void {
    for (const id of ids) {
      // Rolls the whole transaction back: never half an ack or a copy without its delete.
      if (!this.init.store.deleteReserved(id, this.init.sessionId)) throw new BqError(`message ${id} is no longer reserved by this drain of ${this.init.queue}`)
    }
  }

  /** The row ids behind handles this session gave out and still holds. */
  private ids(messages: ReservedMessage[], action: string): number[] {
    return this.guard.claim(messages, action, (handle) => (this.inFlight.has(handle.id) ? handle.id : undefined))
  }

  private run<T>(what: string, fn: () => T): T {
    try {
      return fn()
    } catch (error) {
      if (error instanceof BqError) throw error
      throw new BqError(`cannot ${what} on ${this.init.describe}: ${describeError(error)}`, {cause: error})
    }
  }
}

