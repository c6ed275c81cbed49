/**
 * bq's idempotent producer: Kafka's exactly-once-per-session writes, with acks=all.
 *
 * One producer id and epoch per session (InitProducerId), and per partition a sequence number
 * that advances by the records each acknowledged batch holds. The broker writes a batch only if
 * its sequence is the next one it expects for that partition, so a batch resent after a lost
 * answer or a transient error (with the SAME sequence and bytes) is written at most once: an
 * already-written one comes back as a success (or DUPLICATE_SEQUENCE_NUMBER, counted as one).
 *
 * Up to five batches per partition are in flight at once (what Kafka's idempotence tracks per
 * partition, and what its Java client allows): the broker works on one while bq encodes and sends
 * the next. They go out in order on one connection, which the broker serves in order; if one
 * fails, the ones behind it are refused for the gap in the sequence and are simply sent again,
 * in order, once it is written. So records keep their order per partition.
 *
 * What is retried: a partition not served yet or a moved leader (metadata refreshed), other
 * errors Kafka calls retriable (NOT_ENOUGH_REPLICAS while the in-sync set shrinks after a crash),
 * and a lost connection, for as long as the send has made no progress for less than the retry
 * window (the operation timeout, retry.ts). A resend after a leader change cannot write a batch
 * twice: acks=all means an acknowledged batch is on every in-sync replica, the new leader is one of
 * them and rebuilt the producer's sequences from the log, so it answers the resend with
 * DUPLICATE_SEQUENCE_NUMBER (or success without writing); a batch the old leader never
 * replicated is cut from its log when it rejoins, and written once by the new one. A batch
 * the broker finds too large is split in two and the halves sent in order (nothing of it was
 * written, so they take its sequence numbers). Anything else (OUT_OF_ORDER_SEQUENCE_NUMBER for the
 * first batch in flight, an unknown producer id, an authorization error…) fails the send; the
 * session is then dropped, so a later send starts a new one instead of guessing where the
 * sequences stand.
 */
import {BqError} from '../../../errors.js'
import {kafkaErrorType, sleep} from './errors.js'
import {backoffMs, isRetriableFailure} from './retry.js'
import {encodeRecordBatch, type BatchRecord} from './batch-encoder.js'
import {initProducerId, produce, protocolError, type PartitionBatch, type PartitionOutcome, type ProducerSession} from './produce-request.js'
import type {KafkaWire} from './wire.js'

const ACKS_ALL = -1
/** How long the leader may wait for the in-sync replicas; never longer than the retry window. */
const MAX_ACK_TIMEOUT_MS = 30_000
/** Batches in flight per partition: Kafka's idempotence recognises a resend among the last five. */
const IN_FLIGHT = 5
const DUPLICATE_SEQUENCE_NUMBER = 46
const OUT_OF_ORDER_SEQUENCE_NUMBER = 45
/** Errors that mean the partition is not served here (yet): nothing was written. */
const NOT_READY = new Set(['UNKNOWN_TOPIC_OR_PARTITION', 'LEADER_NOT_AVAILABLE', 'NOT_LEADER_FOR_PARTITION', 'NOT_LEADER_OR_FOLLOWER'])
const TOO_LARGE = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE'])
/** A fresh topic's partitions take a moment to be served everywhere: retried at least this long whatever the window. */
const MIN_WINDOW_MS = 10_000
const MAX_SEQUENCE = 0x7fffffff

/** One batch's records and, once encoded with its sequence, its bytes (resent byte for byte). */
interface Pending {
  records: BatchRecord[]
  batch?: Buffer
}

/** One partition's batches of a send, in order, and where the first one stands. */
interface Lane {
  partition: number
  pending: Pending[]
  /** Retries of its first batch since the lane last made progress. */
  failures: number
}

type Verdict = {kind: 'written'} | {kind: 'split'} | {kind: 'retry'; refresh: boolean; error: unknown} | {kind: 'fatal'; error: unknown}

export class IdempotentProducer {
  private session: Promise<ProducerSession> | undefined
  /** Next sequence per `topic\0partition` in this session (past every acknowledged batch). */
  private readonly sequences = new Map<string, number>()
  /** The send before this one (settled or not). */
  private tail: Promise<void> = Promise.resolve()

  /** When this send last made progress (started, or had a batch written). */
  private stalledSince = 0

  constructor(
    private readonly wire: KafkaWire,
    private readonly displayUrl: string,
    /** How long a send may go without progress while the cluster fails over (the operation timeout). */
    private readonly windowMs = wire.windowMs,
  ) {}

  private get ackTimeoutMs(): number {
    return Math.min(MAX_ACK_TIMEOUT_MS, Math.max(1000, this.windowMs))
  }

  /** This send has made no progress for the whole window (the wait before the next retry included). */
  private windowClosed(wait: number): boolean {
    return Date.now() + wait - this.stalledSince >= Math.max(MIN_WINDOW_MS, this.windowMs)
  }

  /**
   * Writes each partition's batches of records, in order, and resolves once every record is
   * acknowledged by all in-sync replicas. `confirmed(n)` is called as batches are acknowledged, so
   * a failure can say how many made it. Throws kafkajs or bq errors (the caller words them).
   */
  send(topic: string, partitions: Map<number, BatchRecord[][]>, confirmed: (count: number) => void): Promise<void> {
    // One send at a time: two would number their batches from the same sequence.
    const turn = this.tail.then(() => this.sendNow(topic, partitions, confirmed))
    this.tail = turn.catch(() => undefined)
    return turn
  }

  private async sendNow(topic: string, partitions: Map<number, BatchRecord[][]>, confirmed: (count: number) => void): Promise<void> {
    let lanes: Lane[] = []
    for (const [partition, batches] of partitions) {
      const pending = batches.filter((records) => records.length > 0).map((records): Pending => ({records}))
      if (pending.length > 0) lanes.push({partition, pending, failures: 0})
    }
    if (lanes.length === 0) return
    this.stalledSince = Date.now()
    try {
      const session = await this.open(topic)
      while (lanes.length > 0) {
        const {refresh, backoff} = this.settle(topic, lanes, await this.round(topic, lanes, session), confirmed)
        lanes = lanes.filter((lane) => lane.pending.length > 0)
        if (backoff > 0) await sleep(backoff)
        if (refresh) await this.wire.refresh(topic)
      }
    } catch (error) {
      // Where the sequences stand is no longer certain: the next send opens a new session.
      this.session = undefined
      this.sequences.clear()
      throw error
    }
  }

  /** Sends up to IN_FLIGHT batches of every lane, each leader broker's in one pipeline; returns each lane's verdicts, in its order. */
  private async round(topic: string, lanes: Lane[], session: ProducerSession): Promise<Map<Lane, Verdict[]>> {
    const verdicts = new Map<Lane, Verdict[]>()
    const layout = await this.wire.layout(topic)
    const byLeader = new Map<number, Lane[]>()
    for (const lane of lanes) {
      const leader = layout?.find((entry) => entry.partition === lane.partition)?.leader
      if (leader === undefined || leader < 0) {
        verdicts.set(lane, [{kind: 'retry', refresh: true, error: protocolError(leader === undefined ? 3 : 5)}])
        continue
      }
      verdicts.set(lane, [])
      const group = byLeader.get(leader)
      if (group === undefined) byLeader.set(leader, [lane])
      else group.push(lane)
    }
    await Promise.all([...byLeader].map(([leader, group]) => this.pipeline(topic, leader, group, session, verdicts)))
    return verdicts
  }

  /**
   * Request j to a leader carries the j-th batch of each of its lanes. Each request is on its way
   * before the next batch is encoded, so the broker writes one while bq encodes the next; the
   * connection sends them in the order they were started.
   */
  private async pipeline(topic: string, leader: number, group: Lane[], session: ProducerSession, verdicts: Map<Lane, Verdict[]>): Promise<void> {
    let broker: unknown
    try {
      broker = await this.wire.broker(leader)
    } catch (error) {
      for (const lane of group) verdicts.get(lane)!.push(noAnswer(error))
      return
    }
    const sequences = group.map((lane) => this.sequence(topic, lane.partition))
    const answers: Array<Promise<void>> = []
    for (let j = 0; j < IN_FLIGHT; j++) {
      const carried: Lane[] = []
      const batches: PartitionBatch[] = []
      group.forEach((lane, i) => {
        const pending = lane.pending[j]
        if (pending === undefined) return
        pending.batch ??= encodeRecordBatch(pending.records, {...session, baseSequence: sequences[i]})
        sequences[i] = nextSequence(sequences[i], pending.records.length)
        carried.push(lane)
        batches.push({partition: lane.partition, batch: pending.batch})
      })
      if (carried.length === 0) break
      answers.push(
        produce(broker, topic, batches, ACKS_ALL, this.ackTimeoutMs).then(
          (outcomes) => {
            for (const lane of carried) verdicts.get(lane)![j] = judge(outcomes.find((entry) => entry.partition === lane.partition), j)
          },
          (error: unknown) => {
            for (const lane of carried) verdicts.get(lane)![j] = noAnswer(error)
          },
        ),
      )
      // Let the request reach the socket before the next one is encoded.
      await new Promise((resolve) => setImmediate(resolve))
    }
    await Promise.all(answers)
  }

  /**
   * Applies a round's verdicts: each lane's batches are written up to its first failure, which is
   * split, retried or fatal; what was sent behind it is sent again after it. Every lane is settled
   * before a failure is thrown, so batches written in this round count as confirmed.
   */
  private settle(topic: string, lanes: Lane[], verdicts: Map<Lane, Verdict[]>, confirmed: (count: number) => void): {refresh: boolean; backoff: number} {
    let refresh = false
    let backoff = 0
    let failure: {error: unknown} | undefined
    for (const lane of lanes) {
      for (const verdict of verdicts.get(lane)!) {
        if (verdict.kind === 'written') {
          const {records} = lane.pending.shift()!
          this.sequences.set(key(topic, lane.partition), nextSequence(this.sequence(topic, lane.partition), records.length))
          lane.failures = 0
          this.stalledSince = Date.now()
          confirmed(records.length)
          continue
        }
        if (verdict.kind === 'split') {
          const [{records, batch}] = lane.pending
          if (records.length === 1) {
            failure ??= {error: new BqError(`a record of about ${batch!.length} bytes is larger than topic ${topic} on ${this.displayUrl} accepts (its max.message.bytes)`)}
          } else {
            // The halves cover the same sequence numbers: the batches behind keep theirs (and their bytes).
            const half = Math.ceil(records.length / 2)
            lane.pending.splice(0, 1, {records: records.slice(0, half)}, {records: records.slice(half)})
          }
        } else if (verdict.kind === 'retry') {
          const wait = backoffMs(++lane.failures)
          if (this.windowClosed(wait)) failure ??= {error: verdict.error}
          refresh ||= verdict.refresh
          backoff = Math.max(backoff, wait)
        } else {
          failure ??= {error: verdict.error}
        }
        break
      }
    }
    if (failure !== undefined) throw failure.error
    return {refresh, backoff}
  }

  /** The session's producer id and epoch, asked for once (any broker may answer). */
  private open(topic: string): Promise<ProducerSession> {
    this.session ??= (async () => {
      this.stalledSince = Date.now()
      for (let attempt = 1; ; attempt++) {
        try {
          const leader = (await this.wire.layout(topic))?.find((entry) => entry.leader >= 0)?.leader
          if (leader === undefined) throw protocolError(5)
          return await initProducerId(await this.wire.broker(leader))
        } catch (error) {
          const retriable = (error as {retriable?: boolean}).retriable === true || NOT_READY.has(kafkaErrorType(error) ?? '') || isRetriableFailure(error)
          const wait = backoffMs(attempt)
          if (!retriable || this.windowClosed(wait)) throw error
          await sleep(wait)
          await this.wire.refresh(topic)
        }
      }
    })()
    const opening = this.session
    opening.catch(() => {
      if (this.session === opening) this.session = undefined
    })
    return opening
  }

  private sequence(topic: string, partition: number): number {
    return this.sequences.get(key(topic, partition)) ?? 0
  }
}

function key(topic: string, partition: number): string {
  return `${topic}\0${partition}`
}

/** Kafka's sequences wrap to 0 after 2^31-1. */
function nextSequence(sequence: number, count: number): number {
  const next = sequence + count
  return next > MAX_SEQUENCE ? next - MAX_SEQUENCE - 1 : next
}

/** No answer: the batch may or may not be written; the same bytes again are safe either way. */
function noAnswer(error: unknown): Verdict {
  return unanswered(error) || isRetriableFailure(error) ? {kind: 'retry', refresh: true, error} : {kind: 'fatal', error}
}

/** A kafkajs failure to get an answer (connection, timeout, unknown broker) that a resend may cure. */
function unanswered(error: unknown): boolean {
  const {name, retriable} = error as {name?: string; retriable?: boolean}
  return typeof name === 'string' && name.startsWith('KafkaJS') && retriable !== false
}

/**
 * What a partition's answer means for its batch, the `position`-th of its partition in flight.
 * Behind another batch, a gap in the sequence only means that one was not written (yet).
 */
function judge(outcome: PartitionOutcome | undefined, position: number): Verdict {
  if (outcome === undefined) return {kind: 'retry', refresh: true, error: new Error('Kafka did not answer for the partition')}
  const {errorCode} = outcome
  if (errorCode === 0 || errorCode === DUPLICATE_SEQUENCE_NUMBER) return {kind: 'written'}
  const error = protocolError(errorCode)
  const type = error.type ?? ''
  if (TOO_LARGE.has(type)) return {kind: 'split'}
  if (NOT_READY.has(type)) return {kind: 'retry', refresh: true, error}
  if (errorCode === OUT_OF_ORDER_SEQUENCE_NUMBER && position > 0) return {kind: 'retry', refresh: false, error}
  if (error.retriable === true || isRetriableFailure(error)) return {kind: 'retry', refresh: true, error}
  return {kind: 'fatal', error}
}
