/**
 * What a redrive has finished with in one partition of a Kafka topic, as bq stores it in the
 * redrive consumer group's committed offset and its offset-commit metadata.
 *
 * A log cannot delete one record, so "a message left the DLQ" means "the redrive group is done
 * with its offset". Kafka's committed offset only says "everything below N is done"; a redrive
 * that skips unselected or poison records also finishes records above the first one it left.
 * Those finished runs ride in the commit's metadata string, so:
 *
 * - the committed offset is the first record still waiting (nothing is ever skipped silently,
 *   even by a tool that ignores the metadata: it would re-read, never lose);
 * - the metadata lists the finished runs above it, so the next run neither re-sends a record it
 *   already moved nor loses a record it left.
 *
 * Encoding: `bq1:` then base-36 lengths separated by `.`, alternating waiting-run and done-run
 * lengths starting at the committed offset. `bq1:2.3` over committed offset 10 means 10–11 wait,
 * 12–14 are done, everything from 15 waits. Kafka caps metadata (offset.metadata.max.bytes,
 * 4096 by default); see `encode` for what happens at the cap.
 */

export const STATE_PREFIX = 'bq1:'

export interface EncodedProgress {
  /** The offset to commit: the first offset not done. */
  offset: number
  metadata: string
  /** Done runs had to be left out to fit the limit: those records will be read again (never lost). */
  truncated: boolean
}

/** Done offsets of one partition: everything below `committed`, plus sorted, disjoint, non-adjacent `[start, end)` runs above it. */
export class PartitionProgress {
  private constructor(
    private first: number,
    private readonly runs: Array<[number, number]>,
  ) {}

  /** Nothing done yet: the redrive starts at the log start. */
  static fresh(logStart: number): PartitionProgress {
    return new PartitionProgress(logStart, [])
  }

  /**
   * The progress a committed offset and its metadata describe, for a partition whose log now
   * spans [low, high). A missing commit starts at the log start. A commit beyond the end of the
   * log belongs to an earlier topic of the same name (deleted and re-created): it is ignored.
   * Metadata that is not bq's, or is damaged, is ignored: the runs above the committed offset
   * are then read again (duplicates, never losses).
   */
  static decode(offset: number | undefined, metadata: string | null | undefined, low: number, high: number): PartitionProgress {
    if (offset === undefined || offset < 0 || offset > high) return PartitionProgress.fresh(low)
    const progress = new PartitionProgress(offset, parseRuns(offset, metadata ?? '') ?? [])
    progress.clip(high)
    progress.advanceTo(low)
    return progress
  }

  /** The first offset that is not done (what Kafka stores as the committed offset). */
  get committed(): number {
    return this.first
  }

  /** How many done runs lie above the committed offset. */
  get runCount(): number {
    return this.runs.length
  }

  isDone(offset: number): boolean {
    if (offset < this.first) return true
    const i = this.runAtOrBefore(offset)
    return i >= 0 && offset < this.runs[i][1]
  }

  /** The smallest offset at or after `from` that is not done. */
  nextWaiting(from: number): number {
    if (from < this.first) from = this.first
    const i = this.runAtOrBefore(from)
    return i >= 0 && from < this.runs[i][1] ? this.runs[i][1] : from
  }

  /** Offsets in [low, high) that are not done (an offset count: compaction gaps and transaction markers count too). */
  waitingIn(low: number, high: number): number {
    const start = Math.max(low, this.first)
    if (high <= start) return 0
    let waiting = high - start
    for (const [a, b] of this.runs) {
      if (a >= high) break
      const overlap = Math.min(b, high) - Math.max(a, start)
      if (overlap > 0) waiting -= overlap
    }
    return waiting
  }

  markDone(offset: number): void {
    if (offset < this.first) return
    if (offset === this.first) {
      this.first++
      this.absorbFirstRun()
      return
    }
    const last = this.runs[this.runs.length - 1]
    // The common case: acks arrive in offset order, extending the newest run.
    if (last !== undefined && offset === last[1]) {
      last[1]++
      return
    }
    if (last === undefined || offset > last[1]) {
      this.runs.push([offset, offset + 1])
      return
    }
    const i = this.runAtOrBefore(offset)
    if (i >= 0 && offset < this.runs[i][1]) return
    const joinsLeft = i >= 0 && this.runs[i][1] === offset
    const next = this.runs[i + 1]
    const joinsRight = next !== undefined && next[0] === offset + 1
    if (joinsLeft && joinsRight) {
      this.runs[i][1] = next[1]
      this.runs.splice(i + 1, 1)
    } else if (joinsLeft) {
      this.runs[i][1]++
    } else if (joinsRight) {
      next[0]--
    } else {
      this.runs.splice(i + 1, 0, [offset, offset + 1])
    }
  }

  /** Records below the log start are gone (retention): they count as done. */
  advanceTo(low: number): void {
    if (low <= this.first) return
    this.first = low
    while (this.runs.length > 0 && this.runs[0][1] <= low) this.runs.shift()
    if (this.runs.length > 0 && this.runs[0][0] < low) this.runs[0][0] = low
    this.absorbFirstRun()
  }

  /**
   * The commit for this progress. Only runs below `below` are described (a run reaching past it
   * is cut there): the caller passes the lowest offset still in flight, so a commit only ever
   * covers records whose fate is settled. If the metadata would exceed `limit` characters, the
   * highest runs are dropped until it fits (`truncated`): those records will be read again.
   */
  encode(below = Number.POSITIVE_INFINITY, limit = Number.POSITIVE_INFINITY): EncodedProgress {
    const parts: string[] = []
    let length = STATE_PREFIX.length
    let cursor = this.first
    let truncated = false
    for (const [a, b] of this.runs) {
      if (a >= below) break
      const end = Math.min(b, below)
      const pair = `${(a - cursor).toString(36)}.${(end - a).toString(36)}`
      const added = pair.length + (parts.length > 0 ? 1 : 0)
      if (length + added > limit) {
        truncated = true
        break
      }
      parts.push(pair)
      length += added
      cursor = end
    }
    return {offset: this.first, metadata: parts.length === 0 ? '' : STATE_PREFIX + parts.join('.'), truncated}
  }

  /** A copy that also counts `extra` offsets as done (to ask what a commit would look like). */
  withDone(extra: Iterable<number>): PartitionProgress {
    const copy = new PartitionProgress(this.first, this.runs.map(([a, b]) => [a, b]))
    for (const offset of extra) copy.markDone(offset)
    return copy
  }

  private absorbFirstRun(): void {
    while (this.runs.length > 0 && this.runs[0][0] <= this.first) {
      this.first = Math.max(this.first, this.runs[0][1])
      this.runs.shift()
    }
  }

  private clip(high: number): void {
    while (this.runs.length > 0 && this.runs[this.runs.length - 1][0] >= high) this.runs.pop()
    const last = this.runs[this.runs.length - 1]
    if (last !== undefined && last[1] > high) last[1] = high
  }

  /** Index of the last run starting at or before `offset`, or -1. */
  private runAtOrBefore(offset: number): number {
    let lo = 0
    let hi = this.runs.length
    while (lo < hi) {
      const mid = (lo + hi) >>> 1
      if (this.runs[mid][0] <= offset) lo = mid + 1
      else hi = mid
    }
    return lo - 1
  }
}

/** The done runs a `bq1:` metadata string describes above `offset`, or undefined when it is not valid bq metadata. */
function parseRuns(offset: number, metadata: string): Array<[number, number]> | undefined {
  if (!metadata.startsWith(STATE_PREFIX)) return undefined
  const fields = metadata.slice(STATE_PREFIX.length).split('.')
  if (fields.length % 2 !== 0) return undefined
  const runs: Array<[number, number]> = []
  let cursor = offset
  for (let i = 0; i < fields.length; i += 2) {
    const waiting = parseLength(fields[i])
    const done = parseLength(fields[i + 1])
    if (waiting === undefined || done === undefined) return undefined
    const start = cursor + waiting
    cursor = start + done
    if (!Number.isSafeInteger(cursor)) return undefined
    runs.push([start, cursor])
  }
  return runs
}

function parseLength(text: string): number | undefined {
  if (!/^[0-9a-z]{1,11}$/.test(text)) return undefined
  const n = Number.parseInt(text, 36)
  return n >= 1 ? n : undefined
}
