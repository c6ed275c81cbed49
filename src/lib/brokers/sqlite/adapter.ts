/**
 * The embedded default broker: a local SQLite file (`sqlite://PATH`). It has everything the
 * operations want — true peek, headers, delay and exactly-once moves — so bq works with no
 * broker installed.
 */
import {existsSync, mkdirSync, statSync} from 'node:fs'
import {dirname, resolve} from 'node:path'

import {BqError, ConnectionError, UsageError, describeError} from '../../errors.js'
import {BODY_ATTEMPTS} from '../adapter.js'
import type {BrokerAdapter, BrokerMessage, BrowseOptions, Capabilities, DrainOptions, DrainSession, InflightOptions, InflightReport, ListedQueue, OutgoingMessage} from '../adapter.js'
import {AdapterBase} from '../shared/adapter-base.js'
import {describeOwner, ownerIsDead, thisHost} from '../shared/liveness.js'
import {SqliteDrainSession} from './drain.js'
import {sqliteInflight} from './inflight.js'
import {insertAll, toBrokerMessage} from './rows.js'
import {SqliteStore} from './store.js'
import {checkBrowse, checkQueue} from '../shared/check-arguments.js'

const CAPABILITIES: Capabilities = {truePeek: true, headers: true, delay: true, nativeDlq: false, atomicMove: true, afterCrash: 'transaction'}

/**
 * Opens the store at `path`, creating the file if needed. Only the default store
 * (`createDirectories`: `$XDG_DATA_HOME/bq/queues.db`) gets its parent directories created; an
 * explicit path whose directory does not exist is a typo far more often than a wish, so it is a
 * ConnectionError (exit 4) naming the directory, and nothing is created.
 */
export function openSqliteAdapter(path: string, displayUrl: string, options: {createDirectories?: boolean} = {}): BrokerAdapter {
  let store: SqliteStore
  const directory = dirname(resolve(path))
  if (!options.createDirectories && !isDirectory(directory)) {
    throw new ConnectionError(`cannot open ${displayUrl}: the directory ${directory} does not exist (only the default store's directory is created; create it first)`)
  }
  try {
    if (options.createDirectories) mkdirSync(directory, {recursive: true})
    store = new SqliteStore(path)
  } catch (error) {
    throw new ConnectionError(`cannot open ${displayUrl}: ${describeError(error)}`, error)
  }
  return new SqliteAdapter(store, displayUrl)
}

function isDirectory(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).isDirectory()
  } catch {
    return false
  }
}

class SqliteAdapter extends AdapterBase<SqliteDrainSession> {
  readonly kind = 'sqlite'
  readonly capabilities = CAPABILITIES
  readonly binding = BODY_ATTEMPTS

  constructor(
    private readonly store: SqliteStore,
    displayUrl: string,
  ) {
    // A session that fails to close leaves its rows reserved until the next run: say so.
    super(displayUrl, {name: 'SQLite', rethrowSessionErrors: true})
  }

  async publish(queue: string, messages: OutgoingMessage[]): Promise<void> {
    checkQueue(queue, this.displayUrl)
    this.guard(`publish to ${queue}`, () => this.store.write(() => insertAll(this.store, queue, messages, Date.now())))
  }

  async browse(queue: string, options: BrowseOptions): Promise<BrokerMessage[]> {
    checkQueue(queue, this.displayUrl)
    const {limit, offset} = checkBrowse(options)
    if (limit === 0) return []
    return this.guard(`browse ${queue}`, () => this.store.browse(queue, Date.now(), limit, offset).map(toBrokerMessage))
  }

  async queueExists(queue: string): Promise<boolean> {
    checkQueue(queue, this.displayUrl)
    return this.guard(`look for ${queue}`, () => this.store.queues().includes(queue))
  }

  async listQueues(): Promise<ListedQueue[]> {
    this.ensureOpen('list the queues')
    return this.guard('list the queues', () => this.store.queues().map((queue) => ({queue})))
  }

  async count(queue: string): Promise<number> {
    checkQueue(queue, this.displayUrl)
    // Like browse, counts only what a consumer could take now (not reserved, not delayed).
    return this.guard(`count ${queue}`, () => this.store.count(queue, Date.now()))
  }

  /** The rows drains hold reserved, and the delayed ones, readable as they are (inflight.ts). A queue with none is empty, not missing. */
  async inflight(queue: string, options: InflightOptions): Promise<InflightReport> {
    checkQueue(queue, this.displayUrl)
    const limit = Math.floor(options.limit)
    if (!(limit >= 0)) throw new UsageError(`inflight needs a non-negative limit, got ${options.limit}`)
    // One read transaction: the counts and the rows are one snapshot.
    return this.guard(`read what is in flight on ${queue}`, () => this.store.db.transaction(() => sqliteInflight(this.store, queue, limit, Date.now()))())
  }

  async drain(queue: string, options: DrainOptions = {}): Promise<DrainSession> {
    checkQueue(queue, this.displayUrl)
    const max = options.max ?? 0
    if (!Number.isSafeInteger(max) || max < 0) throw new UsageError(`drain max must be a non-negative integer, got ${max}`)
    const started = this.guard(`start draining ${queue}`, () =>
      this.store.write(() => {
        this.returnDeadSessions(queue)
        const startedAt = Date.now()
        const sessionId = this.store.insertSession(queue, process.pid, thisHost(), startedAt)
        // The drain never goes past what was ready when it started.
        return {sessionId, startedAt, lastId: this.store.lastReadyId(queue, startedAt)}
      }),
    )
    return this.track((untrack) => new SqliteDrainSession({store: this.store, queue, ...started, max, describe: this.displayUrl, onClose: untrack}))
  }

  override async recover(queue: string): Promise<number> {
    checkQueue(queue, this.displayUrl)
    return this.guard(`recover ${queue}`, () => this.store.write(() => this.returnDeadSessions(queue)))
  }

  protected async release(): Promise<void> {
    this.store.close()
  }

  /**
   * Returns the reservations of crashed sessions (their process is gone from this host) to the
   * queue, and refuses when a live session holds the queue. Runs inside a write transaction.
   */
  private returnDeadSessions(queue: string): number {
    let returned = 0
    for (const session of this.store.sessionsOf(queue)) {
      const owner = {host: session.host, pid: session.pid, since: session.started_at}
      if (!ownerIsDead(owner)) {
        throw new UsageError(
          `queue ${queue} on ${this.displayUrl} is being drained by ${describeOwner(owner)} (session ${session.id}); wait for it to finish`,
          'busy',
        )
      }
      returned += this.store.unreserveSession(session.id)
      this.store.deleteSession(session.id)
    }
    return returned
  }

  private guard<T>(what: string, fn: () => T): T {
    this.ensureOpen(what)
    try {
      return fn()
    } catch (error) {
      if (error instanceof BqError) throw error
      throw new BqError(`cannot ${what} on ${this.displayUrl}: ${describeError(error)}`, {cause: error})
    }
  }
}
