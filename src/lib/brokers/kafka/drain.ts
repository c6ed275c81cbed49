/**
 * A redrive's drain of one Kafka topic, recorded in the consumer group `bq-redrive.<topic>`.
 *
 * Kafka cannot remove a record or put one back, so:
 * - `next` reads the waiting records by offset (no group membership), up to the end offsets taken
 *   when the drain started (or `max`);
 * - `ack` (called once the copies are confirmed) marks records done and commits the group's
 *   progress (state.ts): the committed offset is the first record still waiting, and the
 *   offset-commit metadata lists the finished runs above it. A commit only ever describes records
 *   below the lowest one still in flight, so a crash can make a later run re-send (at-least-once)
 *   but never skip a record;
 * - `release` leaves a record where it is: it stays waiting, and the next run sees it again, in
 *   its place. Every record left behind a finished one costs a few characters of metadata, which
 *   Kafka caps (offset.metadata.max.bytes, 4 KiB by default). Past a soft limit, a released record
 *   is instead re-appended to the end of its partition (same key, value, headers and timestamp)
 *   and its original marked done: it keeps waiting, but moves to the back.
 *
 * Before each commit the group's current offsets are compared with what this run last saw: a
 * change means another redrive (or a tool) is working on the topic, and this run stops.
 */
import {BqError} from '../../errors.js'
import type {DrainSession, ReservedMessage} from '../adapter.js'
import type {PartitionReader} from './reader.js'
import {copyOfRecord, toBrokerMessage} from './records.js'
import type {PartitionProgress} from './state.js'
import {kafkaErrorType, type GroupOffset, type KafkaClient, type KafkaMessage, type KafkaRecord, type Watermarks} from './client/index.js'
import {DrainGuard} from '../shared/drain-guard.js'
import type {KafkaDrainLease} from './lease.js'

/** Metadata characters a released record may cost before released records are re-appended instead. */
export const STATE_SOFT_LIMIT = 3000
/** Never commit more metadata than this (Kafka's default cap is 4096). */
export const STATE_HARD_LIMIT = 4000
/** How many of this run's earlier commits per partition a failover's stale answer is recognised among. */
const EARLIER_COMMITS = 64
/** Estimated metadata cost of a record left between two finished runs (a new waiting run and done run). */
const HOLE_COST = 8

interface Handle {
  session: KafkaDrainSession
  partition: number
  record: KafkaRecord
}

/** What the group holds for a partition, as far as this run knows. */
interface Committed {
  offset: number
  metadata: string
}

export interface DrainPartition {
  reader: PartitionReader
  progress: PartitionProgress
  /** Handed out, neither acked nor released: offset → handle. */
  inFlight: Map<number, Handle>
  /** Released in this session (left in place or re-appended). */
  released: number
  committed: Committed
  /** A commit whose outcome is unknown (the request failed): the group may hold either. */
  attempted?: Committed
  /**
   * This run's latest earlier commits. Right after a coordinator failover, the new coordinator
   * can answer with one of them for a moment (it serves what its replicas have confirmed, which
   * may lag what the old one acknowledged): that is this run's own progress, not another run's.
   */
  earlier?: Committed[]
}

export interface KafkaDrainInit {
  client: KafkaClient
  topic: string
  groupId: string
  partitions: DrainPartition[]
  /** 0 = no limit beyond the end offsets taken at the start. */
  max: number
  /** Re-appends records to their partitions of this topic (resolves once confirmed). */
  reappend(messages: KafkaMessage[]): Promise<void>
  softLimit?: number
  hardLimit?: number
  /** The topic's redrive lease (lease.ts), released at close. */
  lease?: KafkaDrainLease
  onClose(): void
}

export class KafkaDrainSession implements DrainSession {
  private readonly byPartition = new Map<number, DrainPartition>()
  private current = 0
  private handedOut = 0
  private readonly guard: DrainGuard<Handle>

  constructor(private readonly init: KafkaDrainInit) {
    this.guard = new DrainGuard(this, `Kafka drain of topic "${init.topic}"`, init.onClose)
    for (const part of init.partitions) this.byPartition.set(part.reader.partition, part)
  }

  get topic(): string {
    return this.init.topic
  }

  async next(max: number): Promise<ReservedMessage[]> {
    const limit = this.init.max > 0 ? this.init.max - this.handedOut : Number.POSITIVE_INFINITY
    const want = Math.min(this.guard.checkNext(max), limit)
    this.checkLease()
    const out: ReservedMessage[] = []
    while (out.length < want && this.current < this.init.partitions.length) {
      const part = this.init.partitions[this.current]
      const record = await part.reader.next()
      if (record === undefined) {
        this.current++
        continue
      }
      const handle: Handle = {session: this, partition: part.reader.partition, record}
      part.inFlight.set(record.offset, handle)
      out.push({...toBrokerMessage(this.init.topic, handle.partition, record), handle})
    }
    this.handedOut += out.length
    return out
  }

  async ack(messages: ReservedMessage[]): Promise<void> {
    const handles = this.handles(messages, 'ack')
    const settled = groupByPartition(handles)
    // Commit first, from a projection: if the commit fails the messages are still in flight and
    // the caller can release them.
    const projected = new Map<number, PartitionProgress>()
    for (const [partition, offsets] of settled) projected.set(partition, this.part(partition).progress.withDone(offsets))
    await this.commit(projected, settled)
    for (const [partition, offsets] of settled) {
      const part = this.part(partition)
      for (const offset of offsets) {
        part.progress.markDone(offset)
        part.inFlight.delete(offset)
      }
    }
  }

  async release(messages: ReservedMessage[]): Promise<void> {
    const handles = this.handles(messages, 'release')
    const reappend: Handle[] = []
    for (const [partition, offsets] of groupByPartition(handles)) {
      const part = this.part(partition)
      const leaving = new Set(offsets)
      // Where this run is heading: everything else in flight acked. A record left between two
      // finished runs splits one, which costs metadata; past the soft limit it moves to the back.
      const heading = part.progress.withDone([...part.inFlight.keys()].filter((offset) => !leaving.has(offset)))
      let budget = (this.init.softLimit ?? STATE_SOFT_LIMIT) - heading.encode().metadata.length
      // Consecutive released records form one waiting run: it costs once, if it splits a done run.
      for (let i = 0; i < offsets.length; ) {
        let j = i
        while (j + 1 < offsets.length && offsets[j + 1] === offsets[j] + 1) j++
        const first = offsets[i]
        const last = offsets[j]
        const splits = first > heading.committed && heading.isDone(first - 1) && heading.isDone(last + 1)
        if (splits && budget < HOLE_COST) for (let k = i; k <= j; k++) reappend.push(part.inFlight.get(offsets[k])!)
        else if (splits) budget -= HOLE_COST
        i = j + 1
      }
    }
    const moving = new Set(reappend)
    for (const handle of handles) {
      if (moving.has(handle)) continue
      const part = this.part(handle.partition)
      part.inFlight.delete(handle.record.offset)
      part.released++
    }
    if (reappend.length === 0) return
    try {
      await this.init.reappend(reappend.map((handle) => copyOfRecord(handle.record, handle.partition)))
    } catch (error) {
      // Not re-appended: they stay in place, which is safe (the metadata may then be cut, and
      // records past the cut read again by a later run).
      for (const handle of reappend) {
        const part = this.part(handle.partition)
        part.inFlight.delete(handle.record.offset)
        part.released++
      }
      throw error
    }
    const settled = groupByPartition(reappend)
    for (const [partition, offsets] of settled) {
      const part = this.part(partition)
      for (const offset of offsets) {
        part.progress.markDone(offset)
        part.inFlight.delete(offset)
        part.released++
      }
    }
    // The copies are confirmed; recording the originals as done now keeps a crash from leaving both waiting.
    await this.commit(new Map([...settled.keys()].map((partition) => [partition, this.part(partition).progress])), new Map())
  }

  async close(): Promise<void> {
    return this.guard.close(async () => {
      // Whatever is still in flight simply stays waiting in the log.
      for (const part of this.init.partitions) part.inFlight.clear()
      try {
        await this.commit(new Map(this.init.partitions.map((part) => [part.reader.partition, part.progress])), new Map())
      } finally {
        // A lease that cannot be cleared (connection lost) lapses by itself; a rerun on this host takes it over at once.
        await this.init.lease?.release().catch(() => undefined)
      }
    })
  }

  /** Another run took the lease over (this one stalled past its expiry): stop before moving more. */
  private checkLease(): void {
    if (this.init.lease?.lost !== true) return
    throw new BqError(`the redrive lease of topic ${this.init.topic} was taken over by another run while this one was stalled; this run stopped (records it moved after its last commit may be moved again)`, {code: 'concurrent-drain'})
  }

  /**
   * Messages a redrive would still see while this session runs: waiting records, minus the ones
   * it handed out and has not acked (they return at close, as on a queue).
   */
  waitingNow(marks: Map<number, Watermarks>): number {
    let total = 0
    for (const part of this.init.partitions) {
      const mark = marks.get(part.reader.partition)
      if (mark === undefined) continue
      total += Math.max(0, part.progress.waitingIn(mark.low, mark.high) - part.inFlight.size - part.released)
    }
    return total
  }

  /**
   * Commits the given progress of the given partitions. `settling` are offsets about to leave the
   * in-flight set (so they do not hold the commit back).
   */
  private async commit(progress: Map<number, PartitionProgress>, settling: Map<number, number[]>): Promise<void> {
    const hardLimit = this.init.hardLimit ?? STATE_HARD_LIMIT
    const entries: Array<{partition: number; part: DrainPartition; next: Committed}> = []
    for (const [partition, state] of progress) {
      const part = this.part(partition)
      const leaving = new Set(settling.get(partition) ?? [])
      let below = Number.POSITIVE_INFINITY
      for (const offset of part.inFlight.keys()) if (!leaving.has(offset) && offset < below) below = offset
      const encoded = state.encode(below, hardLimit)
      if (encoded.offset === part.committed.offset && encoded.metadata === part.committed.metadata) continue
      entries.push({partition, part, next: {offset: encoded.offset, metadata: encoded.metadata}})
    }
    if (entries.length === 0) return
    const {client, groupId, topic} = this.init
    const now = await client.groupOffsets(groupId, topic, entries.map((entry) => entry.partition))
    for (const entry of entries) {
      const held = now.get(entry.partition)
      if (!same(held, entry.part.committed) && !same(held, entry.part.attempted) && !(entry.part.earlier ?? []).some((known) => same(held, known))) {
        throw new BqError(
          `the redrive progress of topic ${topic} (consumer group ${groupId}) changed while this run was draining it: another redrive or a tool is working on the same topic. This run stopped; records it moved after its last commit may be moved again (at-least-once)`,
          {code: 'concurrent-drain'},
        )
      }
    }
    // A broker with a smaller metadata cap than Kafka's default gets less metadata: the records
    // past the cut are read again by a later run (duplicates, never losses).
    let sending = entries
    for (;;) {
      for (const entry of sending) entry.part.attempted = entry.next
      try {
        await client.commitOffsets(groupId, topic, sending.map((entry) => ({partition: entry.partition, ...entry.next})))
        break
      } catch (error) {
        if (kafkaErrorType(error) !== 'OFFSET_METADATA_TOO_LARGE' || sending.every((entry) => entry.next.metadata === '')) throw error
        sending = sending.map((entry) => ({...entry, next: {offset: entry.next.offset, metadata: cut(entry.next.metadata)}}))
      }
    }
    for (const entry of sending) {
      entry.part.earlier = [...(entry.part.earlier ?? []).slice(1 - EARLIER_COMMITS), entry.part.committed]
      entry.part.committed = entry.next
      entry.part.attempted = undefined
    }
  }

  private part(partition: number): DrainPartition {
    const part = this.byPartition.get(partition)
    if (part === undefined) throw new BqError(`partition ${partition} is not part of the drain of ${this.init.topic}`)
    return part
  }

  /** The handles behind messages this session handed out and has not settled. */
  private handles(messages: ReservedMessage[], action: string): Handle[] {
    return this.guard.claim(messages, action, (handle) => (this.part(handle.partition).inFlight.get(handle.record.offset) === handle ? handle : undefined))
  }
}

/** Offsets by partition, each list ascending. */
function groupByPartition(handles: Handle[]): Map<number, number[]> {
  const groups = new Map<number, number[]>()
  for (const handle of handles) {
    const offsets = groups.get(handle.partition)
    if (offsets === undefined) groups.set(handle.partition, [handle.record.offset])
    else offsets.push(handle.record.offset)
  }
  for (const offsets of groups.values()) offsets.sort((a, b) => a - b)
  return groups
}

function same(held: GroupOffset | undefined, known: Committed | undefined): boolean {
  if (known === undefined) return false
  return (held?.offset ?? -1) === known.offset && (held?.metadata ?? '') === known.metadata
}

/** Half the runs of a `bq1:` metadata string (whole pairs), or '' when nothing is left. */
function cut(metadata: string): string {
  const fields = metadata.split(':')[1]?.split('.') ?? []
  const keep = Math.floor(fields.length / 4) * 2
  return keep === 0 ? '' : `${metadata.split(':')[0]}:${fields.slice(0, keep).join('.')}`
}
