/**
 * The lifecycle every adapter shares, written once: the closed flag, the drain sessions it must
 * close with it, the "adapter is closed" error, and a recover() for brokers that need none.
 * An adapter extends it and keeps only what is its own (its calls and its connection).
 */
import {BqError} from '../../errors.js'
import type {Binding, BrokerAdapter, BrokerMessage, BrowseOptions, Capabilities, DrainOptions, DrainSession, ListedQueue, OutgoingMessage, PublishReceipt} from '../adapter.js'
import {checkQueue} from './check-arguments.js'

export interface AdapterBaseOptions {
  /** The broker as messages name it: `Redis`, `Service Bus`. */
  name: string
  /**
   * close() rethrows the first failure of a session's close (after releasing the connection).
   * For brokers where a failed close leaves reservations someone must recover; where the broker
   * returns them itself, the failure changes nothing and close() stays quiet.
   */
  rethrowSessionErrors?: boolean
}

export abstract class AdapterBase<S extends DrainSession = DrainSession> implements BrokerAdapter {
  abstract readonly kind: string
  abstract readonly capabilities: Capabilities
  abstract readonly binding: Binding
  private closed = false
  private readonly tracked = new Set<S>()

  protected constructor(
    readonly displayUrl: string,
    private readonly lifecycle: AdapterBaseOptions,
  ) {}

  abstract publish(queue: string, messages: OutgoingMessage[]): Promise<PublishReceipt | void>
  abstract browse(queue: string, options: BrowseOptions): Promise<BrokerMessage[]>
  abstract count(queue: string): Promise<number>
  abstract drain(queue: string, options?: DrainOptions): Promise<DrainSession>
  abstract listQueues(): Promise<ListedQueue[]>

  /** The default for brokers that return a dead run's reservations themselves (`afterCrash`). */
  async recover(queue: string): Promise<number> {
    this.check(queue, `recover ${queue}`)
    return 0
  }

  /** Closes every open drain session, then releases the connection (even if a session failed). */
  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    let failure: {error: unknown} | undefined
    try {
      for (const session of [...this.tracked]) {
        try {
          await session.close()
        } catch (error) {
          failure ??= {error}
        }
      }
    } finally {
      await this.release()
    }
    if (failure !== undefined && this.lifecycle.rethrowSessionErrors === true) throw failure.error
  }

  /** Releases the adapter's own connections and clients; called once, by close(), after the sessions. */
  protected abstract release(): Promise<void>

  protected get isClosed(): boolean {
    return this.closed
  }

  /** The drain sessions opened and not closed yet. */
  protected get sessions(): ReadonlySet<S> {
    return this.tracked
  }

  /**
   * Opens a session that close() will close; `open` gets the callback the session calls when it
   * closes, so it is not closed twice (or kept) by the adapter.
   */
  protected track(open: (untrack: () => void) => S): S {
    // A session closed before `open` returned is never added.
    const entry: {session?: S; gone: boolean} = {gone: false}
    const session = open(() => {
      entry.gone = true
      if (entry.session !== undefined) this.tracked.delete(entry.session)
    })
    entry.session = session
    if (!entry.gone) this.tracked.add(session)
    return session
  }

  /** Throws once close() has begun: `what` is what the caller tried, e.g. `publish to orders`. */
  protected ensureOpen(what: string): void {
    if (this.closed) throw new BqError(`cannot ${what}: the ${this.lifecycle.name} adapter for ${this.displayUrl} is closed`, {code: 'adapter-closed'})
  }

  /** Checks a queue argument and that the adapter is open; adapters with their own naming rules override it. */
  protected check(queue: string, what: string): void {
    checkQueue(queue, this.displayUrl)
    this.ensureOpen(what)
  }
}
