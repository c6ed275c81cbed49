/**
 * Sequential reading of the records a redrive would still see: per partition, from the redrive
 * group's committed offset up to a bound, skipping the runs it already finished. Reading is by
 * offset (Fetch requests); no consumer group is joined and nothing is committed. From its second
 * fetch on (a long read, not a peek at the head) a reader keeps the next fetch in flight while
 * its records are handed out, so the broker's answer and bq's decoding overlap. Memory is up to
 * two fetch responses per partition being read.
 */
import type {PartitionProgress} from './state.js'
import type {FetchResult, KafkaClient, KafkaRecord, PartitionLayout, Watermarks} from './client/index.js'

/** The fetch size once a reader reads at length: fewer, larger answers (a peek's first fetch stays small). */
const STREAM_FETCH_BYTES = 2 * 1024 * 1024

export class PartitionReader {
  private buffer: KafkaRecord[] = []
  private at = 0
  /** Where the fetch after this buffer starts (past records the broker hides). */
  private afterBuffer = 0
  /** Fetches made so far: read-ahead starts with the second. */
  private fetches = 0
  /** The fetch already asked for, and the offset it starts at. */
  private ahead: {offset: number; result: Promise<FetchResult>} | undefined

  constructor(
    private readonly client: KafkaClient,
    private readonly topic: string,
    readonly layout: PartitionLayout,
    /** The next offset to look at. */
    private position: number,
    /** Records at or beyond this offset are not read (the bound taken when reading started). */
    public end: number,
    private readonly progress: () => PartitionProgress,
    private readonly fetchBytes: number,
  ) {}

  get partition(): number {
    return this.layout.partition
  }

  /**
   * The next waiting record when the buffer already holds it, without waiting (a browse takes
   * most records this way, not one promise each); undefined when `next()` must be asked instead
   * (the buffer is used up, or the bound is reached).
   */
  nextBuffered(): KafkaRecord | undefined {
    while (this.at < this.buffer.length) {
      const record = this.buffer[this.at]
      if (record.offset >= this.end) return undefined
      this.at++
      this.position = record.offset + 1
      if (!this.progress().isDone(record.offset)) return record
    }
    return undefined
  }

  /** The next waiting record below `end`, or undefined when there is none. */
  async next(): Promise<KafkaRecord | undefined> {
    for (;;) {
      while (this.at < this.buffer.length) {
        const record = this.buffer[this.at++]
        if (record.offset >= this.end) {
          this.drop()
          this.position = this.end
          return undefined
        }
        this.position = record.offset + 1
        if (!this.progress().isDone(record.offset)) return record
      }
      if (this.buffer.length > 0) {
        this.position = Math.max(this.position, this.afterBuffer)
        this.drop()
      }
      // Jump over finished runs without fetching them.
      this.position = this.progress().nextWaiting(this.position)
      if (this.position >= this.end) return undefined
      const result = await this.fetchAt(this.position)
      if (result.outOfRange === true) {
        // Retention deleted records while bq read: carry on from the new log start, if it moved.
        const low = (await this.client.watermarks(this.topic, [this.layout])).get(this.partition)?.low ?? this.position
        if (low <= this.position) return undefined
        this.position = low
        continue
      }
      // Nothing visible below the bound (the rest is hidden, e.g. behind an open transaction): stop.
      if (result.next <= this.position) return undefined
      if (result.records.length === 0) {
        this.position = result.next
        continue
      }
      this.buffer = result.records
      this.afterBuffer = result.next
      this.readAhead()
    }
  }

  /** The records from `offset`: the read-ahead's answer when it started there, else a new fetch. */
  private async fetchAt(offset: number): Promise<FetchResult> {
    const ahead = this.ahead
    this.ahead = undefined
    this.fetches++
    if (ahead !== undefined && ahead.offset === offset) return ahead.result
    return this.client.fetch(this.topic, this.layout, offset, this.fetchSize())
  }

  private fetchSize(): number {
    return this.fetches >= 2 ? Math.max(this.fetchBytes, STREAM_FETCH_BYTES) : this.fetchBytes
  }

  /** Asks for the records after the buffer now, if the reader will want them (the second fetch on). */
  private readAhead(): void {
    if (this.fetches < 2) return
    const offset = this.progress().nextWaiting(this.afterBuffer)
    if (offset >= this.end) return
    const result = this.client.fetch(this.topic, this.layout, offset, this.fetchSize())
    // Unused when the reader stops early or skips ahead; a failure surfaces when it is used.
    result.catch(() => undefined)
    this.ahead = {offset, result}
  }

  private drop(): void {
    this.buffer = []
    this.at = 0
  }
}

/** The waiting records of a whole topic, partition after partition (0, 1, …), each in offset order. */
export class TopicScan {
  private current = 0
  /** How many records this scan has returned or skipped so far. */
  index = 0

  constructor(
    private readonly readers: PartitionReader[],
    /** Identifies the group state and log starts this scan was built on. */
    readonly fingerprint: string,
  ) {}

  /**
   * Lets a resumed scan see records appended since it started. Every partition is asked again
   * (each reader goes on from where it stopped, so nothing is returned twice): a partition read
   * to its end before may have grown, and peek --follow resumes the same scan poll after poll.
   */
  extendTo(marks: Map<number, Watermarks>): void {
    for (const reader of this.readers) {
      const high = marks.get(reader.partition)?.high
      if (high !== undefined && high > reader.end) reader.end = high
    }
    this.current = 0
  }

  /** The next record when it is already fetched (see PartitionReader.nextBuffered); else undefined: ask `next()`. */
  nextBuffered(): {partition: number; record: KafkaRecord} | undefined {
    const reader = this.readers[this.current]
    const record = reader?.nextBuffered()
    if (record === undefined) return undefined
    this.index++
    return {partition: reader.partition, record}
  }

  async next(): Promise<{partition: number; record: KafkaRecord} | undefined> {
    while (this.current < this.readers.length) {
      const reader = this.readers[this.current]
      const record = await reader.next()
      if (record !== undefined) {
        this.index++
        return {partition: reader.partition, record}
      }
      this.current++
    }
    return undefined
  }
}
