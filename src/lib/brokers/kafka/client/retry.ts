/**
 * Riding through a leader election: which Kafka failures a fresh look at the cluster cures, and
 * the one retry loop every request of bq's Kafka client goes through (reads, offsets of the
 * redrive, lock and lease groups, topic creation, produce).
 *
 * When a broker dies, its partitions and the groups it coordinated move to other nodes within
 * seconds (the controller fences it once its heartbeats stop). Until then the metadata still
 * names it: requests to it are refused, and the survivors answer NOT_LEADER_OR_FOLLOWER,
 * NOT_COORDINATOR or NOT_ENOUGH_REPLICAS. Each of those is retried with backoff and fresh
 * metadata (read from any broker still answering) while the operation, its retries included, is
 * within the operation timeout (--timeout; a send of many batches: since its last progress);
 * past it the last failure becomes exit 4.
 *
 * Retrying is safe for everything bq sends: reads and offset reads change nothing, an offset
 * commit of the same value is the same commit, and a produce is resent with the same producer
 * id, epoch, sequence and bytes (produce.ts), which the new leader recognises.
 */
import {BqError, ConnectionError} from '../../../errors.js'
import {scrubSecrets} from '../../shared/redact.js'
import {secondsText} from '../../shared/timeouts.js'
import {isConnectionFailure, kafkaErrorType, kafkaFailure, rootCause, sleep} from './errors.js'

/**
 * Broker answers a leader election or a coordinator move explains (kafkajs's names for the older
 * codes: NOT_LEADER_FOR_PARTITION is Kafka's NOT_LEADER_OR_FOLLOWER, GROUP_* its COORDINATOR_*).
 */
const ELECTION_TYPES = new Set([
  'NOT_LEADER_OR_FOLLOWER',
  'NOT_LEADER_FOR_PARTITION',
  'LEADER_NOT_AVAILABLE',
  'COORDINATOR_NOT_AVAILABLE',
  'GROUP_COORDINATOR_NOT_AVAILABLE',
  'NOT_COORDINATOR',
  'NOT_COORDINATOR_FOR_GROUP',
  'COORDINATOR_LOAD_IN_PROGRESS',
  'GROUP_LOAD_IN_PROGRESS',
  'NOT_ENOUGH_REPLICAS',
  'NOT_ENOUGH_REPLICAS_AFTER_APPEND',
  'REQUEST_TIMED_OUT',
  'FENCED_LEADER_EPOCH',
  'UNKNOWN_LEADER_EPOCH',
  'REPLICA_NOT_AVAILABLE',
  'BROKER_NOT_AVAILABLE',
  'NETWORK_EXCEPTION',
  'KAFKA_STORAGE_ERROR',
])

/** kafkajs's failures to get an answer from a broker it knows: refused, dropped, timed out, no longer listed. */
const LOST_BROKER_NAMES = new Set(['KafkaJSConnectionError', 'KafkaJSConnectionClosedError', 'KafkaJSRequestTimeoutError', 'KafkaJSBrokerNotFound', 'KafkaJSNoBrokerAvailableError', 'KafkaJSGroupCoordinatorNotFound'])
const LOST_BROKER_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH'])

const FIRST_BACKOFF_MS = 100
const MAX_BACKOFF_MS = 1000

/** A broker answer that a moved leader or coordinator explains. */
export function isElectionAnswer(error: unknown): boolean {
  return ELECTION_TYPES.has(kafkaErrorType(error) ?? '')
}

/**
 * No answer from a broker (refused, reset, timed out): it may have died, and another node may
 * lead now. Refused credentials and TLS failures are not this: the same request fails again.
 */
export function isLostBroker(error: unknown): boolean {
  if (isAuthOrTls(error)) return false
  for (const candidate of [error as {name?: string; code?: unknown; message?: string} | undefined, rootCause(error)]) {
    if (candidate === undefined || candidate === null) continue
    if (LOST_BROKER_NAMES.has(candidate.name ?? '')) return true
    if (typeof candidate.code === 'string' && LOST_BROKER_CODES.has(candidate.code)) return true
    if (/^(Broker )?not connected$|ECONNREFUSED|ECONNRESET|socket hang up/i.test(candidate.message ?? '')) return true
  }
  return false
}

/** What `retrying` retries by default: an election answer or a lost broker. */
export function isRetriableFailure(error: unknown): boolean {
  return isElectionAnswer(error) || isLostBroker(error)
}

function isAuthOrTls(error: unknown): boolean {
  const root = rootCause(error)
  if (root.name === 'KafkaJSSASLAuthenticationError' || /SASL|AUTHENTICATION|AUTHORIZATION/.test(root.type ?? '')) return true
  return /certificate|self[- ]signed|handshake|SSL|TLS|ERR_TLS|CERT_/i.test(`${root.message ?? ''} ${String((root as {code?: unknown}).code ?? '')}`)
}

/** Waits before the n-th retry: 100 ms, doubling, at most a second. */
export function backoffMs(retry: number): number {
  return Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.max(0, retry - 1))
}

export interface RetryOptions {
  /** How long the operation may take, its retries included (from its first attempt), before a failure stands. */
  windowMs: number
  /** Before each retry: forget cached leaders or coordinators, read fresh metadata. Its own failure is ignored. */
  refresh?: (error: unknown) => Promise<void>
  retriable?: (error: unknown) => boolean
}

/** Runs `attempt` until it succeeds, fails for good, or the window (the operation timeout) has passed. */
export async function retrying<T>(attempt: () => Promise<T>, options: RetryOptions): Promise<T> {
  const retriable = options.retriable ?? isRetriableFailure
  const started = Date.now()
  for (let retry = 1; ; retry++) {
    try {
      return await attempt()
    } catch (error) {
      const wait = backoffMs(retry)
      if (!retriable(error) || Date.now() + wait - started >= options.windowMs) throw new RetriesExhausted(error, Date.now() - started, retriable(error))
      await sleep(wait)
      await options.refresh?.(error).catch(() => undefined)
    }
  }
}

/** The last failure of a `retrying` loop, and whether it was still retriable when the window closed. */
export class RetriesExhausted extends Error {
  constructor(
    readonly last: unknown,
    readonly elapsedMs: number,
    readonly unavailable: boolean,
  ) {
    super((last as {message?: string} | undefined)?.message ?? String(last), {cause: last})
    this.name = 'RetriesExhausted'
  }
}

/** The failure `retrying` gave up on (itself when the error did not come from there). */
export function lastFailure(error: unknown): unknown {
  return error instanceof RetriesExhausted ? error.last : error
}

/**
 * One line for a failed operation: a cluster that kept answering with retriable errors until the
 * window closed is a ConnectionError (exit 4) naming its last answer; anything else reads as
 * kafkaFailure (a lost connection is exit 4 there too).
 */
export function retryFailure(what: string, error: unknown, displayUrl: string, secrets: string[]): Error {
  const last = lastFailure(error)
  if (last instanceof BqError) return last
  const unavailable = error instanceof RetriesExhausted ? error.unavailable : isRetriableFailure(last)
  if (!unavailable || isConnectionFailure(last)) return kafkaFailure(what, last, displayUrl, secrets)
  const type = kafkaErrorType(last)
  const message = scrubSecrets(rootCause(last).message ?? String(last), secrets)
  const waited = error instanceof RetriesExhausted ? ` for ${secondsText(error.elapsedMs)}` : ''
  return new ConnectionError(`cannot ${what}: the Kafka cluster at ${displayUrl} stayed unavailable${waited} (${type === undefined ? '' : `${type}: `}${message}); set --timeout SECONDS to wait longer`, last)
}

/** kafkajs asked every broker it knows and none answered (it returns null then): the next metadata refresh may find one. */
export class NoBrokerAnswered extends Error {
  override name = 'KafkaJSBrokerNotFound'
}
