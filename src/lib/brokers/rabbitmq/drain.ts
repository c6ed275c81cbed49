/**
 * A RabbitMQ drain session (the source side of a redrive).
 *
 * Messages are taken by a consumer with manual acknowledgement on a connection of the session's
 * own: RabbitMQ blocks a connection that publishes during a resource alarm, and acks must still
 * flow then, so consuming never shares the publishing connection. Until a message is acked it
 * stays un-acked on the broker: a crash, a dropped connection or `close()` hands every such
 * message back to the queue, and a classic queue puts them back at their original positions
 * (flagged `redelivered`). Nothing is staged anywhere else, so there is nothing to recover.
 *
 * Window. A consumer's prefetch counts its un-acked deliveries, and released messages stay
 * un-acked until close (so a run never sees them twice); they would starve the window. RabbitMQ
 * applies a per-consumer `basic.qos` only to consumers started after it (measured on 3.10: raising
 * it leaves a running consumer's window unchanged), and a channel-wide ("global") prefetch is
 * refused by quorum queues. So when the current consumer's window is used up, the session cancels
 * it (its un-acked messages stay un-acked on the channel and can still be acked) and starts a
 * fresh consumer with a fresh window. A released message costs the session only a count (the
 * requeue at close is one `nack` of everything un-acked); it keeps no body of its own beyond the
 * current window and the batch the caller holds.
 *
 * Bound. The drain stops after the messages present when it started (or `max`). Each consumer's
 * prefetch is chosen so the broker can never deliver more than that bound, and an ack that would
 * reopen the window past it cancels the consumer first; so no message beyond the bound is taken
 * and later handed back with a changed `redelivered` flag (or, on a quorum queue, a raised count).
 */
import type {Channel, ChannelModel, ConsumeMessage} from 'amqplib'

import {BqError, ConnectionError, describeError} from '../../errors.js'
import type {DrainSession, ReservedMessage} from '../adapter.js'
import {brokerReason, closeQuietly, toBrokerMessage, waitUntilReady} from './support.js'
import {DrainGuard} from '../shared/drain-guard.js'
import {SerialLock} from '../shared/serial-lock.js'
import {WakeSignal} from '../shared/wake-signal.js'

export interface DrainTuning {
  /** Un-acked messages in flight between the broker and bq at once (not counting released ones). */
  window?: number
  /** How long without a delivery before asking the broker whether the queue is empty. */
  idleCheckMs?: number
  /** How long the queue may report ready messages that never arrive before the drain ends. */
  maxIdleMs?: number
}

/**
 * 1000 double-buffers the batches of 500 a redrive asks for: the broker delivers the next batch
 * while the caller publishes and acks the current one. Measured here (20,000 messages, loopback,
 * next(500) + ack): ~4.3–5.8k msg/s with a window of 500, ~7.8–9.6k msg/s with 1000.
 */
const DEFAULT_WINDOW = 1000
const MAX_PREFETCH = 65_535

interface Generation {
  id: number
  tag?: string
  prefetch: number
  delivered: number
  acked: number
  cancelled: boolean
}

interface Handle {
  session: RabbitDrainSession
  tag: number
  generation: Generation
  message: ConsumeMessage
}

type WatchedChannel = Channel & {bqClosedBecause?: string; bqClosed?: boolean}

export class RabbitDrainSession implements DrainSession {
  private readonly window: number
  private readonly idleCheckMs: number
  private readonly maxIdleMs: number
  private readonly lock = new SerialLock()
  /** Delivered, not yet handed out. At most one window's worth. */
  private buffer: Array<{message: ConsumeMessage; generation: Generation}> = []
  private bufferHead = 0
  /** Handed out by next(), neither acked nor released yet. */
  private readonly outstanding = new Map<number, Handle>()
  private deliveredTotal = 0
  private ackedTotal = 0
  private handedTotal = 0
  private releasedCount = 0
  private nextGeneration = 1
  private calls = 0
  private readAhead = 1
  private active: Generation | undefined
  private readonly arrivals = new WakeSignal()
  private readonly guard: DrainGuard<Handle>
  private exhausted = false

  constructor(
    private readonly connection: ChannelModel,
    private readonly channel: WatchedChannel,
    private readonly queue: string,
    private readonly displayUrl: string,
    /** Messages this session may take in all. */
    private readonly limit: number,
    tuning: DrainTuning = {},
    private readonly onClosed?: () => void,
  ) {
    this.guard = new DrainGuard(this, `RabbitMQ drain of "${queue}"`)
    this.window = Math.max(1, Math.min(tuning.window ?? DEFAULT_WINDOW, MAX_PREFETCH))
    this.idleCheckMs = tuning.idleCheckMs ?? 250
    this.maxIdleMs = tuning.maxIdleMs ?? 10_000
    channel.on('close', () => {
      if (this.guard.isClosed) return
      const closed = () => new BqError(`RabbitMQ closed the drain channel of queue "${queue}"${channel.bqClosedBecause ? `: ${channel.bqClosedBecause}` : ''}; its un-acked messages went back to the queue`, {code: 'channel-closed'})
      if (channel.bqClosedBecause !== undefined) this.fail(closed())
      // Closed without a channel error: the connection went, and its 'close' (emitted right after
      // the channels') says why; fall back to the channel message only if it does not come.
      else setImmediate(() => this.guard.failure === undefined && !this.guard.isClosed && this.fail(closed()))
    })
    connection.on('close', (error?: unknown) => {
      if (this.guard.isClosed) return
      this.fail(new ConnectionError(`the RabbitMQ connection to ${displayUrl} was lost during the drain of "${queue}"${error ? ` (${brokerReason(error)})` : ''}; the broker returns its un-acked messages to the queue`, error))
    })
  }

  /** How many messages this session was allowed to take when it opened. */
  get bound(): number {
    return this.limit
  }

  /** Released so far (they return to the queue at close). */
  get released(): number {
    return this.releasedCount
  }

  async next(max: number): Promise<ReservedMessage[]> {
    return this.lock.run(async () => {
      this.guard.checkOpen('take messages')
      if (!(max > 0)) return []
      const want = Math.min(Math.floor(max), this.limit - this.handedTotal)
      if (want <= 0) {
        await this.stopConsuming()
        return []
      }
      // Read ahead only once the caller streams: a first call holds no more than it asked for
      // (the rest stays ready for other consumers and in counts); later calls get a full window.
      this.readAhead = this.calls++ === 0 ? Math.min(want, this.window) : this.window
      let idleSince = Date.now()
      while (this.buffered() < want && !this.exhausted && this.deliveredTotal < this.limit) {
        const generation = this.active
        const stalled = generation === undefined || generation.cancelled || generation.delivered - generation.acked >= generation.prefetch
        // A consumer started with a small first read-ahead is replaced by a full-window one.
        const undersized = generation !== undefined && !stalled && generation.prefetch < this.readAhead && this.deliveredTotal - generation.delivered + generation.acked + generation.prefetch < this.limit
        if (stalled || undersized) {
          // A full window (released messages stay un-acked and fill it) must not shorten the
          // batch: a fresh consumer continues. Buffered messages stay below want + window.
          await this.startGeneration()
          idleSince = Date.now()
          continue
        }
        const before = this.deliveredTotal
        await this.arrivals.wait(this.idleCheckMs)
        this.guard.checkOpen('take messages')
        if (this.deliveredTotal > before) {
          idleSince = Date.now()
          continue
        }
        if (this.buffered() > 0) break
        // Nothing came for a while: ask the broker on this channel whether anything is ready.
        const ready = await this.readyOnChannel()
        // The queue answers that query ahead of its pending work, so deliveries it made just
        // before may still be queued in the channel; a channel-local round trip lets them out.
        await this.settle()
        if (this.deliveredTotal > before) continue
        if (ready === 0 || Date.now() - idleSince >= this.maxIdleMs) this.exhausted = true
      }
      const batch: ReservedMessage[] = []
      while (batch.length < want && this.buffered() > 0) {
        const {message, generation} = this.buffer[this.bufferHead]
        this.buffer[this.bufferHead++] = undefined as never
        const handle: Handle = {session: this, tag: message.fields.deliveryTag, generation, message}
        this.outstanding.set(handle.tag, handle)
        this.handedTotal++
        batch.push({...toBrokerMessage(message, String(message.fields.deliveryTag)), handle})
      }
      if (this.bufferHead > 1024 && this.bufferHead * 2 > this.buffer.length) {
        this.buffer = this.buffer.slice(this.bufferHead)
        this.bufferHead = 0
      }
      if (this.handedTotal >= this.limit || (this.exhausted && this.buffered() === 0)) await this.stopConsuming()
      return batch
    })
  }

  async ack(messages: ReservedMessage[]): Promise<void> {
    if (messages.length === 0) return
    return this.lock.run(async () => {
      const handles = this.own(messages, 'ack')
      // Acking frees window slots of the running consumer; if that could let the broker deliver
      // past the bound, stop the consumer first (after cancel-ok nothing more arrives from it).
      const active = this.active
      if (active !== undefined && !active.cancelled) {
        const freed = handles.filter((handle) => handle.generation === active).length
        const deliveredBefore = this.deliveredTotal - active.delivered
        if (freed > 0 && deliveredBefore + active.acked + freed + active.prefetch > this.limit) await this.stopConsuming()
      }
      for (const handle of handles) {
        this.channel.ack(handle.message)
        handle.generation.acked++
        this.ackedTotal++
        this.outstanding.delete(handle.tag)
      }
      // Resolve only once the broker applied the acks, not when they sit in a socket buffer.
      await this.barrier()
    })
  }

  async release(messages: ReservedMessage[]): Promise<void> {
    if (messages.length === 0) return
    return this.lock.run(async () => {
      const handles = this.own(messages, 'release')
      // Nothing to tell the broker: the message stays un-acked (so it is not delivered again in
      // this run) and goes back to the queue when the channel closes.
      for (const handle of handles) {
        this.outstanding.delete(handle.tag)
        this.releasedCount++
      }
    })
  }

  async close(): Promise<void> {
    return this.guard.close(async () => {
      this.onClosed?.()
      this.arrivals.wake()
      await this.lock.run(async () => {
        if (!this.channel.bqClosed) {
          try {
            await this.stopConsuming()
            // Requeue explicitly, then close: a classic queue puts every un-acked message back at
            // its original position. (Closing alone would do the same; this keeps it deterministic.)
            const returning = this.deliveredTotal - this.ackedTotal
            const readyBefore = (await this.channel.checkQueue(this.queue)).messageCount
            this.channel.nackAll(true)
            if (returning > 0) await waitUntilReady(this.channel, this.queue, readyBefore + returning)
          } catch {
            // The channel or connection is going away: the broker requeues un-acked messages itself.
          }
          await closeQuietly(this.channel)
        }
        try {
          await this.connection.close()
        } catch {
          // Already closed.
        }
      })
    })
  }

  /** Starts consuming with a fresh window sized to what the bound still allows. */
  private async startGeneration(): Promise<void> {
    await this.stopConsuming()
    const prefetch = Math.min(this.readAhead, this.limit - this.deliveredTotal, MAX_PREFETCH)
    if (prefetch <= 0) {
      this.exhausted = true
      return
    }
    const generation: Generation = {id: this.nextGeneration++, prefetch, delivered: 0, acked: 0, cancelled: false}
    try {
      // Non-global: applies to the consumer started next (quorum queues refuse a global prefetch).
      await this.channel.prefetch(prefetch, false)
      const ok = await this.channel.consume(this.queue, (message) => this.onDelivery(generation, message), {noAck: false})
      generation.tag = ok.consumerTag
    } catch (error) {
      throw this.guard.failure ?? this.wrap('start consuming', error)
    }
    this.active = generation
  }

  private onDelivery(generation: Generation, message: ConsumeMessage | null): void {
    if (message === null) {
      // basic.cancel from the broker: the queue was deleted (or failed over) under the drain.
      generation.cancelled = true
      if (!this.guard.isClosed) this.fail(new BqError(`RabbitMQ cancelled the drain of queue "${this.queue}" (was the queue deleted?)`, {code: 'consumer-cancelled'}))
      return
    }
    generation.delivered++
    this.deliveredTotal++
    this.buffer.push({message, generation})
    this.arrivals.wake()
  }

  /** Cancels the running consumer; deliveries it already made stay un-acked and usable. */
  private async stopConsuming(): Promise<void> {
    const generation = this.active
    if (generation === undefined || generation.cancelled) return
    generation.cancelled = true
    if (generation.tag === undefined || this.channel.bqClosed) return
    try {
      await this.channel.cancel(generation.tag)
    } catch (error) {
      throw this.guard.failure ?? this.wrap('cancel the consumer', error)
    }
  }

  private buffered(): number {
    return this.buffer.length - this.bufferHead
  }


  private async readyOnChannel(): Promise<number> {
    try {
      return (await this.channel.checkQueue(this.queue)).messageCount
    } catch (error) {
      throw this.guard.failure ?? this.wrap('check the queue', error)
    }
  }

  /**
   * basic.ack has no reply. A round trip on the same channel after the acks means the broker's
   * channel has taken them (they are not sitting in a socket buffer of ours) before ack()
   * resolves. The queue applies them asynchronously; a crash now would at worst return an acked
   * message (a duplicate on the target), never lose one.
   */
  private async barrier(): Promise<void> {
    try {
      await this.channel.checkQueue(this.queue)
    } catch (error) {
      throw this.guard.failure ?? this.wrap('confirm the acknowledgements', error)
    }
  }

  /** basic.qos is answered by the channel itself, after it wrote every delivery queued before. */
  private async settle(): Promise<void> {
    try {
      await this.channel.prefetch(this.readAhead, false)
    } catch (error) {
      throw this.guard.failure ?? this.wrap('check the queue', error)
    }
  }

  /** The handles behind messages this session handed out and has not settled. */
  private own(messages: ReservedMessage[], action: string): Handle[] {
    return this.guard.claim(messages, action, (handle) => this.outstanding.get(handle.tag))
  }

  private fail(error: BqError): void {
    this.guard.fail(error)
    this.arrivals.wake()
  }

  private wrap(action: string, error: unknown): BqError {
    const reason = this.channel.bqClosedBecause ?? brokerReason(error)
    return new BqError(`RabbitMQ drain of "${this.queue}" on ${this.displayUrl} could not ${action}: ${reason || describeError(error)}`, {cause: error})
  }
}
