/**
 * A browsing cursor over one Artemis queue: a receiver whose source has `distribution-mode:
 * copy`, which Artemis serves from a queue browser. A browser's deliveries are copies: nothing is
 * acknowledged or redelivered, no delivery count rises and the queue keeps its order (messages
 * being delivered to a consumer at that moment, and scheduled ones not yet due, are not shown).
 *
 * Each read asks for what it wants with credit and `drain`: the broker sends what it has up to
 * that credit and then reports the credit used up, so a drain round that brings nothing means the
 * end of the queue (as of now), with no waiting on a timer. The cursor stays open so that paging on (offset = where
 * the last read ended) continues where it was instead of browsing the head again.
 */
import type {Message, Receiver, Session} from 'rhea'

import {BqError} from '../../errors.js'
import {creditOf, drainOnce, type ArtemisConnection} from './connection.js'

/** Messages skipped per read when moving to an offset. */
const SKIP_CHUNK = 1000

export class ArtemisBrowser {
  private readonly buffer: Message[] = []
  private failure: Error | undefined
  private drainedWaiter: (() => void) | undefined
  /** Called when deliveries use the credit up while a drain is pending (see drain()). */
  private creditSpent: (() => void) | undefined
  private readonly stopWatching: () => void
  private closed = false
  /** Messages read from the head so far (returned or skipped). */
  position = 0
  lastUsed = Date.now()

  private constructor(
    private readonly connection: ArtemisConnection,
    private readonly session: Session,
    private readonly receiver: Receiver,
    readonly queue: string,
  ) {
    receiver.on('message', (context) => {
      // Settling a browsed copy acknowledges nothing; it frees rhea's delivery slot.
      context.delivery?.accept()
      if (context.message !== undefined) this.buffer.push(context.message)
      if (creditOf(receiver) === 0) this.creditSpent?.()
    })
    receiver.on('receiver_drained', () => this.drainedWaiter?.())
    receiver.on('receiver_close', () => {
      if (this.closed) return
      this.fail(new BqError(`Artemis closed the browser of queue "${queue}" on ${connection.displayUrl}: ${connection.describe(receiver.error ?? 'no reason given')}`, {code: 'browse-closed'}))
    })
    this.stopWatching = connection.onLost((error) => this.fail(error))
  }

  static async open(connection: ArtemisConnection, queue: string): Promise<ArtemisBrowser> {
    const session = connection.newSession()
    const receiver = await connection.openReceiver(
      {
        source: {address: queue, capabilities: ['queue'], distribution_mode: 'copy'},
        credit_window: 0,
        autoaccept: false,
      },
      session,
    )
    return new ArtemisBrowser(connection, session, receiver, queue)
  }

  /** Discards the next `count` messages (fewer if the queue ends first); returns how many. */
  async skip(count: number): Promise<number> {
    let skipped = 0
    while (skipped < count) {
      const chunk = await this.read(Math.min(SKIP_CHUNK, count - skipped))
      skipped += chunk.length
      if (chunk.length === 0) break
    }
    return skipped
  }

  /** The next `count` messages; fewer means the queue has no more right now. */
  async read(count: number): Promise<Message[]> {
    this.lastUsed = Date.now()
    if (this.failure !== undefined) throw this.failure
    // Artemis can end a drain early (right after a large message), so only a round that brings
    // nothing means the end.
    while (this.buffer.length < count) {
      const before = this.buffer.length
      const wanted = count - this.buffer.length - creditOf(this.receiver)
      if (wanted > 0) this.receiver.add_credit(wanted)
      await this.drain()
      if (this.buffer.length === before) break
    }
    const page = this.buffer.splice(0, count)
    this.position += page.length
    return page
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    this.stopWatching()
    this.drainedWaiter?.()
    await this.connection.closeLink(this.receiver)
    if (!this.session.is_closed()) this.session.close()
  }

  get usable(): boolean {
    return !this.closed && this.failure === undefined
  }

  /** Asks the broker to use up the credit now and waits for its answer. */
  private async drain(): Promise<void> {
    if (creditOf(this.receiver) === 0) return
    await drainOnce(this.receiver, (waiter) => (this.drainedWaiter = waiter), (spent) => (this.creditSpent = spent))
    this.drainedWaiter = undefined
    this.creditSpent = undefined
    // rhea keeps sending drain=true on later flows until told otherwise.
    this.receiver.drain = false
    if (this.failure !== undefined) throw this.failure
  }

  private fail(error: Error): void {
    this.failure ??= error
    this.drainedWaiter?.()
  }
}
