/**
 * An Artemis drain session (the source side of a redrive), on a connection of its own.
 *
 * Messages come from a consuming receiver with manual settlement and credit granted by hand, so
 * the broker never sends more than the drain's bound (the ready count at start, or `max`) and
 * never more than a window ahead of the caller. A delivery stays unsettled (Artemis keeps it
 * "delivering", invisible to other consumers) until:
 * - ack: settled `accepted`, only after the engine confirmed the copy on the target;
 * - close: everything still unsettled (released, un-acked, not yet handed out) is settled
 *   `released`: back on the queue, delivery count unchanged. Artemis puts returned messages
 *   back in message-id order, i.e. at their original positions, whatever order they are
 *   released in (measured on 2.40.0, see the adapter tests).
 * A crash needs nothing: when the connection drops, Artemis returns every unsettled delivery
 * itself (and may count that as a failed delivery: delivery-count + 1).
 *
 * Held releases vs rhea's buffer. rhea keeps every incoming delivery in a per-session ring buffer
 * and frees slots only from its oldest end once settled, so one held (released, not yet settled)
 * delivery pins every later slot. When held deliveries would keep the drain from granting credit,
 * they are handed back early with `modified{delivery-failed: false, undeliverable-here: true}`:
 * back on the queue in place, delivery count unchanged, and never delivered to this receiver
 * again, so the run still sees each message once.
 *
 * rhea merges the dispositions it writes in one tick into ranges and, for a range that starts with
 * one delivery, keeps only that delivery's outcome (an accept next to a release would accept
 * both). So every settling step below issues one kind of outcome and then lets rhea flush
 * before anything else is settled.
 */
import type {Delivery, EventContext, Message, Receiver} from 'rhea'

import {BqError, ConnectionError} from '../../errors.js'
import type {DrainSession, ReservedMessage} from '../adapter.js'
import {creditOf, drainOnce, flushed, type ArtemisConnection} from './connection.js'
import type {ArtemisManagement} from './management.js'
import {toBrokerMessage} from './message.js'
import {DrainGuard} from '../shared/drain-guard.js'
import {SerialLock} from '../shared/serial-lock.js'
import {WakeSignal} from '../shared/wake-signal.js'

export interface ArtemisDrainTuning {
  /** Messages in flight between the broker and bq ahead of the caller (default 1000). */
  window?: number
  /** How long without a delivery before asking the broker whether it has any more (ms). */
  idleMs?: number
  /** rhea's per-session delivery buffer of the drain connection (default 8192). */
  sessionBuffer?: number
}

export const DEFAULT_SESSION_BUFFER = 8192
/**
 * 1000 double-buffers the batches of 500 the redrive engine asks for: the broker delivers the
 * next batch while the caller publishes and acks the current one.
 */
const DEFAULT_WINDOW = 1000
/** Slots of rhea's buffer never promised to the broker (management replies share nothing, but stay clear of the edge). */
const BUFFER_MARGIN = 16

interface Entry {
  delivery: Delivery
  message: Message
  /** Hand-out order, 0-based: the message's position in this run. */
  seq: number
}

interface Handle {
  session: ArtemisDrainSession
  seq: number
}

export interface ArtemisDrainInit {
  connection: ArtemisConnection
  receiver: Receiver
  /** On the drain's own connection: a reply to it means the broker processed the acks sent before. */
  management?: ArtemisManagement
  queue: string
  /** Messages this session may take in all. */
  limit: number
  tuning?: ArtemisDrainTuning
  onClosed?: () => void
}

export class ArtemisDrainSession implements DrainSession {
  private readonly window: number
  private readonly idleMs: number
  private readonly capacity: number
  private readonly lock = new SerialLock()
  /** Delivered, not handed out yet. */
  private buffer: Entry[] = []
  private bufferHead = 0
  /** Every delivery not yet settled, by delivery id, in delivery order (buffered, out, held). */
  private readonly unsettled = new Map<number, Entry>()
  /** Handed out, neither acked nor released. */
  private readonly outstanding = new Map<number, Entry>()
  /** Released by the caller, to be settled `released` at close. */
  private held: Entry[] = []
  private delivered = 0
  private handed = 0
  private lastDeliveryId = -1
  private calls = 0
  private exhausted = false
  private readonly guard: DrainGuard<Handle>
  private readonly arrivals = new WakeSignal()
  private drainedWaiter: (() => void) | undefined
  /** Called when deliveries use the credit up while a drain is pending (see drainOnce). */
  private creditSpent: (() => void) | undefined
  private readonly stopWatching: () => void

  constructor(private readonly init: ArtemisDrainInit) {
    this.guard = new DrainGuard(this, `Artemis drain of "${init.queue}"`)
    this.window = Math.max(1, Math.floor(init.tuning?.window ?? DEFAULT_WINDOW))
    this.idleMs = init.tuning?.idleMs ?? 250
    this.capacity = init.tuning?.sessionBuffer ?? DEFAULT_SESSION_BUFFER
    const {receiver, connection, queue} = init
    receiver.on('message', (context: EventContext) => this.onDelivery(context))
    receiver.on('receiver_drained', () => this.drainedWaiter?.())
    receiver.on('receiver_close', () => {
      if (this.guard.isClosed) return
      this.fail(new BqError(`Artemis closed the drain of queue "${queue}" on ${connection.displayUrl}: ${connection.describe(receiver.error ?? 'no reason given')}; its unsettled messages went back to the queue`, {code: 'consumer-closed'}))
    })
    this.stopWatching = connection.onLost((error) => {
      this.fail(new ConnectionError(`${error.message} during the drain of "${queue}"; Artemis returns its unsettled messages to the queue`, error))
    })
  }

  /** Released so far and not yet returned (for tests). */
  get heldCount(): number {
    return this.held.length
  }

  async next(max: number): Promise<ReservedMessage[]> {
    return this.lock.run(async () => {
      const want = Math.min(this.guard.checkNext(max), this.init.limit - this.handed)
      if (want <= 0) return []
      // A first call holds no more than it asked for (the rest stays ready for others and in
      // counts); once the caller streams, the broker works a window ahead.
      const readAhead = this.calls++ === 0 ? want : Math.max(this.window, want)
      while (this.buffered() < want && !this.exhausted && this.delivered < this.init.limit) {
        if (!(await this.topUp(readAhead))) {
          // No room for credit in rhea's buffer: hand out what is here, or say why nothing comes.
          if (this.buffered() > 0) break
          throw new BqError(`the drain of "${this.init.queue}" cannot take more messages: ${this.outstanding.size} handed out are neither acked nor released`, {code: 'drain-stalled'})
        }
        const before = this.delivered
        await this.arrivals.wait(this.idleMs)
        this.guard.checkOpen('take messages')
        if (this.delivered > before) continue
        // Nothing for a while: have the broker send what it has now and report the rest of the
        // credit used up. Nothing new then means the queue has no more for us.
        await this.drainCredit()
        this.guard.checkOpen('take messages')
        if (this.delivered === before) this.exhausted = true
      }
      const batch: ReservedMessage[] = []
      while (batch.length < want && this.buffered() > 0) {
        const entry = this.buffer[this.bufferHead]
        this.buffer[this.bufferHead++] = undefined as never
        entry.seq = this.handed++
        this.outstanding.set(entry.seq, entry)
        const handle: Handle = {session: this, seq: entry.seq}
        batch.push({...toBrokerMessage(entry.message, String(entry.seq), 'consume'), handle})
      }
      if (this.bufferHead > 1024 && this.bufferHead * 2 > this.buffer.length) {
        this.buffer = this.buffer.slice(this.bufferHead)
        this.bufferHead = 0
      }
      return batch
    })
  }

  async ack(messages: ReservedMessage[]): Promise<void> {
    if (messages.length === 0) return
    return this.lock.run(async () => {
      const entries = this.own(messages, 'ack')
      for (const entry of entries) {
        entry.delivery.accept()
        this.outstanding.delete(entry.seq)
        this.unsettled.delete(entry.delivery.id)
      }
      await flushed()
      // AMQP has no answer to a settled disposition. A management round trip on this connection is
      // answered after the broker handled what was sent before it, so ack() resolves once the
      // messages are gone from the queue, not while the acks sit in a socket buffer.
      if (this.init.management !== undefined) await this.init.management.attribute('broker', 'version').catch(() => undefined)
      this.guard.checkOpen('ack')
    })
  }

  async release(messages: ReservedMessage[]): Promise<void> {
    if (messages.length === 0) return
    return this.lock.run(async () => {
      // Nothing to tell the broker yet: the delivery stays unsettled, so this run does not get it
      // again, and goes back to the queue at close.
      for (const entry of this.own(messages, 'release')) {
        this.outstanding.delete(entry.seq)
        this.held.push(entry)
      }
    })
  }

  async close(): Promise<void> {
    return this.guard.close(async () => {
      this.init.onClosed?.()
      this.arrivals.wake()
      this.drainedWaiter?.()
      await this.lock.run(async () => {
        const {connection, receiver} = this.init
        if (connection.lost === undefined) {
          // One outcome for all, in delivery order; Artemis restores message-id order by itself.
          for (const entry of this.unsettled.values()) entry.delivery.release()
          this.unsettled.clear()
          this.outstanding.clear()
          this.held = []
          await flushed()
          await connection.closeLink(receiver)
          await this.init.management?.close().catch(() => undefined)
        }
        this.stopWatching()
        // The broker answers the close after it handled every frame before it: the released
        // messages are back on the queue when this resolves.
        await connection.close()
      })
    })
  }

  private onDelivery(context: EventContext): void {
    const delivery = context.delivery
    const message = context.message
    if (delivery === undefined || message === undefined) return
    if (this.guard.isClosed) {
      delivery.release()
      return
    }
    const entry: Entry = {delivery, message, seq: -1}
    this.unsettled.set(delivery.id, entry)
    this.lastDeliveryId = delivery.id
    this.delivered++
    this.buffer.push(entry)
    this.arrivals.wake()
    if (creditOf(this.init.receiver) === 0) this.creditSpent?.()
  }

  /**
   * Grants credit so that buffered + in flight reaches `target` (never past the bound), within
   * the room rhea's buffer has; hands held messages back early when they are what stands in the
   * way. Resolves whether any credit is outstanding.
   */
  private async topUp(target: number): Promise<boolean> {
    const receiver = this.init.receiver
    const desired = Math.min(target, this.init.limit - this.delivered + this.buffered()) - this.buffered() - creditOf(receiver)
    if (desired > 0) {
      let room = this.room()
      if (room < desired && this.held.length > 0) {
        await this.returnHeldEarly()
        room = this.room()
      }
      const credit = Math.min(desired, room)
      if (credit > 0) receiver.add_credit(credit)
    }
    return creditOf(receiver) > 0
  }

  /** Slots of rhea's buffer not yet used by unsettled deliveries or promised as credit. */
  private room(): number {
    const oldest = this.unsettled.keys().next()
    const occupied = oldest.done ? 0 : this.lastDeliveryId - oldest.value + 1
    return this.capacity - BUFFER_MARGIN - occupied - creditOf(this.init.receiver)
  }

  private async returnHeldEarly(): Promise<void> {
    for (const entry of this.held) {
      entry.delivery.modified({delivery_failed: false, undeliverable_here: true})
      this.unsettled.delete(entry.delivery.id)
    }
    this.held = []
    await flushed()
  }

  private async drainCredit(): Promise<void> {
    const receiver = this.init.receiver
    if (creditOf(receiver) === 0) return
    await drainOnce(receiver, (waiter) => (this.drainedWaiter = waiter), (spent) => (this.creditSpent = spent))
    this.drainedWaiter = undefined
    this.creditSpent = undefined
    // rhea keeps sending drain=true on later flows until told otherwise.
    receiver.drain = false
  }


  private buffered(): number {
    return this.buffer.length - this.bufferHead
  }

  /** The entries behind messages this session handed out and has not settled. */
  private own(messages: ReservedMessage[], action: string): Entry[] {
    return this.guard.claim(messages, action, (handle) => this.outstanding.get(handle.seq))
  }

  private fail(error: BqError): void {
    this.guard.fail(error)
    this.arrivals.wake()
    this.drainedWaiter?.()
  }
}
