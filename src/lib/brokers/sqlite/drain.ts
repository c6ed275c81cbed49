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
import {checkBatch, checkQueue} from '../shared/check-arguments.js'

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
  onClose(session: SqliteDrainSession): void
}

export class SqliteDrainSession implements DrainSession {
  private taken = 0
  /** Ids handed out and neither acked, moved nor released. */
  private readonly inFlight = new Set<number>()
  private closed = false

  constructor(private readonly init: SqliteDrainInit) {}

  async next(max: number): Promise<ReservedMessage[]> {
    this.checkOpen('next')
    let want = checkBatch(max)
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
    this.checkOpen('ack')
    const ids = this.ids(messages)
    this.run('ack messages', () => this.init.store.write(() => this.deleteAll(ids)))
    for (const id of ids) this.inFlight.delete(id)
  }

  async moveAtomically(sources: ReservedMessage[], targetQueue: string, outgoing: OutgoingMessage[]): Promise<void> {
    this.checkOpen('move')
    checkQueue(targetQueue, this.init.describe)
    const ids = this.ids(sources)
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
    this.checkOpen('release')
    // Nothing to write: the rows stay reserved by this session until close.
    for (const id of this.ids(messages)) this.inFlight.delete(id)
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    const {store, sessionId} = this.init
    try {
      this.run('return reserved messages', () =>
        store.write(() => {
          store.unreserveSession(sessionId)
          store.deleteSession(sessionId)
        }),
      )
    } finally {
      this.init.onClose(this)
    }
  }

  private deleteAll(ids: number[]): void {
    for (const id of ids) {
      // Rolls the whole transaction back: never half an ack or a copy without its delete.
      if (!this.init.store.deleteReserved(id, this.init.sessionId)) throw new BqError(`message ${id} is no longer reserved by this drain of ${this.init.queue}`)
    }
  }

  /** The row ids behind handles this session gave out and still holds. */
  private ids(messages: ReservedMessage[]): number[] {
    const ids = messages.map((message) => {
      const handle = message.handle as Handle | undefined
      if (handle?.session !== this || !this.inFlight.has(handle.id)) {
        throw new BqError(`a message passed to this drain of ${this.init.queue} was not handed out by it, or was already acked or released`)
      }
      return handle.id
    })
    if (new Set(ids).size !== ids.length) throw new BqError(`the same message was passed twice to one call on the drain of ${this.init.queue}`)
    return ids
  }

  private checkOpen(what: string): void {
    if (this.closed) throw new BqError(`cannot ${what}: the drain of ${this.init.queue} is closed`)
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

