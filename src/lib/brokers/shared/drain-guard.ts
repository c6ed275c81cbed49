/**
 * What every drain session checks, written once: that it is still open (or has not failed), that
 * close runs once, and that the messages passed to ack/release/move are its own, unsettled and
 * each passed once. A session composes one and says how it finds its outstanding handles.
 */
import {BqError} from '../../errors.js'
import type {DrainSession, ReservedMessage} from '../adapter.js'
import {checkBatch} from './check-arguments.js'

/** A session's handle names the session that gave it out. */
export interface OwnedHandle {
  readonly session: unknown
}

export class DrainGuard<H extends OwnedHandle> {
  private closed = false
  private failed: BqError | undefined

  /**
   * @param owner the session (what its handles point to)
   * @param label how messages name the session, e.g. `RabbitMQ drain of "orders"`
   * @param onClose called once close() has finished (the adapter stops tracking the session)
   */
  constructor(
    private readonly owner: DrainSession,
    readonly label: string,
    private readonly onClose?: () => void,
  ) {}

  get isClosed(): boolean {
    return this.closed
  }

  /** The first failure recorded by fail(), if any. */
  get failure(): BqError | undefined {
    return this.failed
  }

  /** Records why the session can no longer be used (the first reason wins); checkOpen throws it. */
  fail(error: BqError): void {
    this.failed ??= error
  }

  /** Throws a recorded failure, or `session-closed` once close() has begun. */
  checkOpen(what: string): void {
    if (this.failed !== undefined) throw this.failed
    if (this.closed) throw new BqError(`cannot ${what}: the ${this.label} is closed`, {code: 'session-closed'})
  }

  /** The checks before next(): the session is open and `max` a valid batch size (returned). */
  checkNext(max: number): number {
    this.checkOpen('take messages')
    return checkBatch(max)
  }

  /** Runs `work` on the first call only (later calls resolve at once), then `onClose` whatever happened. */
  async close(work: () => Promise<void>): Promise<void> {
    if (this.closed) return
    this.closed = true
    try {
      await work()
    } finally {
      this.onClose?.()
    }
  }

  /**
   * The checks before ack/release/move: the session is open, and each message's handle is this
   * session's, passed once, and outstanding (`find` returns undefined when it was already acked
   * or released). Returns what `find` returned for each, in order.
   */
  claim<T>(messages: readonly ReservedMessage[], action: string, find: (handle: H) => T | undefined): T[] {
    this.checkOpen(action)
    const seen = new Set<H>()
    return messages.map((message) => {
      const handle = message.handle as H | null | undefined
      if (handle?.session !== this.owner) throw foreignMessage(action, this.label)
      const which = message.position === undefined ? 'a message' : `message ${message.position}`
      if (seen.has(handle)) throw new BqError(`${which} was passed twice to one ${action} on the ${this.label}`, {code: 'duplicate-message'})
      seen.add(handle)
      const found = find(handle)
      if (found === undefined) throw new BqError(`${which} of the ${this.label} was already acked or released`, {code: 'already-settled'})
      return found
    })
  }
}

function foreignMessage(action: string, label: string): BqError {
  return new BqError(`cannot ${action} a message that this ${label} did not hand out`, {code: 'foreign-message'})
}

/** The drain of a queue with nothing to take (empty or absent): no connection, nothing handed out. */
export class EmptyDrainSession implements DrainSession {
  constructor(private readonly label: string) {}

  async next(max: number): Promise<ReservedMessage[]> {
    checkBatch(max)
    return []
  }

  async ack(messages: ReservedMessage[]): Promise<void> {
    if (messages.length > 0) throw foreignMessage('ack', this.label)
  }

  async release(messages: ReservedMessage[]): Promise<void> {
    if (messages.length > 0) throw foreignMessage('release', this.label)
  }

  async close(): Promise<void> {}
}
