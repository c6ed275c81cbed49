/**
 * The acknowledgements a Pulsar drain sent, and which of them a subscription's cursor shows
 * applied. The WebSocket API never confirms an ack: when its socket is lost, acks still in flight
 * (written by bq, not yet read by the broker) are dropped and their messages come back. The
 * cursor the admin API reports (mark-delete position, individually deleted ranges) is the one
 * record of what landed, so after a lost connection bq compares what it sent against it.
 *
 * Kept per ledger as plain entry numbers (8 bytes an ack, no object per message): recording sits
 * on the redrive's hot path, the comparison only runs after a fault.
 */
import {comparePositions, parseDeletedRanges, parsePosition} from './message-id.js'
import type {CursorStats} from './admin.js'

type Entry = {ledger: number; entry: number}
type Ranges = ReturnType<typeof parseDeletedRanges>

export class SentAcks {
  private readonly ledgers = new Map<number, {entries: Float64Array; length: number}>()
  /** Acks of message ids bq could not decode: never known to have landed. */
  private undecoded = 0
  private total = 0

  /** How many acks were recorded. */
  get size(): number {
    return this.total
  }

  /** Records one sent ack; `position` undefined when the message id could not be decoded. */
  add(position: Entry | undefined): void {
    this.total++
    if (position === undefined) {
      this.undecoded++
      return
    }
    let list = this.ledgers.get(position.ledger)
    if (list === undefined) {
      list = {entries: new Float64Array(256), length: 0}
      this.ledgers.set(position.ledger, list)
    }
    if (list.length === list.entries.length) {
      const grown = new Float64Array(list.entries.length * 2)
      grown.set(list.entries)
      list.entries = grown
    }
    list.entries[list.length++] = position.entry
  }

  /**
   * How many recorded acks the cursor does not show applied: their messages are still in the
   * subscription's backlog. A batch entry counts as applied only once the whole entry is deleted
   * (every message of a batch returns otherwise). No cursor (the subscription is gone): none applied.
   */
  notApplied(cursor: CursorStats | undefined): number {
    if (cursor === undefined) return this.total
    const markDelete = parsePosition(cursor.markDeletePosition) ?? {ledger: -1, entry: -1}
    const deleted = parseDeletedRanges(cursor.individuallyDeletedMessages).sort((a, b) => comparePositions(a.from, b.from))
    let missing = this.undecoded
    for (const [ledger, list] of this.ledgers) {
      for (let i = 0; i < list.length; i++) {
        const position = {ledger, entry: list.entries[i]}
        if (comparePositions(position, markDelete) > 0 && !inSortedRanges(position, deleted)) missing++
      }
    }
    return missing
  }
}

/** Whether the entry lies in one of the cursor's ranges ((open, closed], sorted, disjoint as the broker keeps them). */
function inSortedRanges(position: Entry, ranges: Ranges): boolean {
  let low = 0
  let high = ranges.length - 1
  while (low <= high) {
    const middle = (low + high) >> 1
    const range = ranges[middle]
    if (comparePositions(position, range.from) <= 0) high = middle - 1
    else if (comparePositions(position, range.to) > 0) low = middle + 1
    else return true
  }
  return false
}
