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
 * it (its un-acked messages stay un-acked and can still be acked) and starts a fresh consumer with
 * a fresh window. A released message costs the session only a count (the requeue at close is one
 * `nack` of everything un-acked per channel); it keeps no body of its own beyond the current
 * window and the batch the caller holds.
 *
 * One channel per window ("generation"). RabbitMQ keeps a channel's un-acked deliveries in one
 * queue and finds the delivery a `basic.ack` names by scanning it from the oldest (rabbit_channel
 * collect_acks, 3.10): with the held (released) messages of a whole run on one channel, every ack
 * scanned past all of them, and a filtered redrive that left 50,000 behind took minutes (quadratic;
 * bench/rabbitmq/). So each generation consumes on a channel of its own: an ack scans at most its
 * own generation's window, and a channel whose deliveries are all acked is reused or closed.
 * Channels are bounded (MAX_CHANNELS, and the broker's channel_max): once many are held open, new
 * generations take wider windows so the rest of the bound still fits, and with the budget spent a
 * generation shares the previous one's channel (an ack there scans that channel's held messages
 * too, which the widened windows keep few in number) instead of opening one past the bound. A
 * channel closes only once no delivery on it is un-acked.
 *
 * Bound. The drain stops after the messages present when it started (or `max`). Each consumer's
 * prefetch is chosen so the broker can never deliver more than that bound, and an ack that would
 * reopen the window past it cancels the consumer first; so no message beyond the bound is taken
 * and later handed back with a changed `redelivered` flag (or, on a quorum queue, a raised count).
 *
 * Cancel only a consumer with nothing in flight (quorum queues). A quorum queue grants a consumer
 * its deliveries asynchronously: one granted just before a `basic.cancel` but reaching the channel
 * after it is not passed to the client, and the queue takes it back as a return, raising its
 * x-delivery-count; it then comes back in the same run and costs a second delivery when the run
 * releases it (measured on 3.10: with a delivery limit of 2, a third selective redrive dead-lettered
 * a message it never examined). So a consumer is replaced only once its window is full (nothing can
 * be in flight), never merely because a later call wants a wider window; and before the cancel an
 * ack needs at the bound, the session lets what the queue already granted arrive. Classic queues
 * send every delivery ahead of cancel-ok on the same channel, so they need no wait.
 *
 * A lost connection or channel fails every pending and later call at once (a ConnectionError when
 * the connection went), and close() never waits on a broker that is gone.
 */
import type {Channel, ChannelModel, ConsumeMessage} from 'amqplib'

import {BqError, ConnectionError, describeError} from '../../errors.js'
import type {DrainSession, ReservedMessage} from '../adapter.js'
import {brokerReason, closeConnection, closeQuietly, quietChannel, toBrokerMessage, waitUntilReady} from './support.js'
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
  /** The most consumer channels held open at once (tests); default MAX_CHANNELS. */
  maxChannels?: number
}

/**
 * 1000 double-buffers the batches of 500 a redrive asks for: the broker delivers the next batch
 * while the caller publishes and acks the current one. Measured here (20,000 messages, loopback,
 * next(500) + ack): ~4.3–5.8k msg/s with a window of 500, ~7.8–9.6k msg/s with 1000.
 */
const DEFAULT_WINDOW = 1000
const MAX_PREFETCH = 65_535
/**
 * Consumer channels one session holds open at most: 1000 windows of 1000 held messages each
 * before windows widen. RabbitMQ's default channel_max is 2047 per connection.
 */
const MAX_CHANNELS = 1000

type WatchedChannel = Channel & {bqClosedBecause?: string; bqClosed?: boolean; bqRetiring?: boolean}

interface Generation {
  id: number
  /** The channel this generation's consumer runs on (its deliveries are acked there). */
  channel: WatchedChannel
  tag?: string
  prefetch: number
  delivered: number
  acked: number
  cancelled: boolean
}

interface Handle {
  session: RabbitDrainSession
  /** Session-wide sequence number (delivery tags are per channel). */
  seq: number
  generation: Generation
  message: ConsumeMessage
}

export class RabbitDrainSession implements DrainSession {
  private readonly window: number
  private readonly idleCheckMs: number
  private readonly maxIdleMs: number
  private readonly maxChannels: number
  private readonly lock = new SerialLock()
  /** Delivered, not yet handed out. At most one window's worth. */
  private buffer: Array<{message: ConsumeMessage; generation: Generation}> = []
  private bufferHead = 0
  /** Handed out by next(), neither acked nor released yet. */
  private readonly outstanding = new Map<number, Handle>()
  /** Consumer channels open: the generation consuming on each now, and its deliveries not yet acked (released ones included). */
  private readonly channels = new Map<WatchedChannel, {owner: Generation; held: number}>()
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
    /** The channel the session asks queue-level questions on (counts at close). */
    private readonly control: WatchedChannel,
    private readonly queue: string,
    private readonly displayUrl: string,
    /** Messages this session may take in all. */
    private readonly limit: number,
    tuning: DrainTuning = {},
    private readonly onClosed?: () => void,
    /** A quorum queue: deliveries in flight at a cancel are returned (see the file comment). */
    private readonly quorum = false,
  ) {
    this.guard = new DrainGuard(this, `RabbitMQ drain of "${queue}"`)
    this.window = Math.max(1, Math.min(tuning.window ?? DEFAULT_WINDOW, MAX_PREFETCH))
    this.idleCheckMs = tuning.idleCheckMs ?? 250
    this.maxIdleMs = tuning.maxIdleMs ?? 10_000
    const channelMax = Number((connection as unknown as {connection?: {channelMax?: number}}).connection?.channelMax ?? 0)
    // The control channel and the adapter-independent headroom come off the broker's limit.
    this.maxChannels = Math.max(1, Math.min(tuning.maxChannels ?? MAX_CHANNELS, channelMax > 0 ? channelMax - 2 : Infinity))
    this.watch(control)
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

  /** Consumer channels open now (tests). */
  get openChannels(): number {
    return this.channels.size
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
        // A consumer started with a small first read-ahead is replaced by a full-window one only
        // once its window is full: cancelling one that has deliveries in flight strands them on a
        // quorum queue (see the file comment); the wait is one delivery.
        const stalled = generation === undefined || generation.cancelled || generation.delivered - generation.acked >= generation.prefetch
        if (stalled) {
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
        // Nothing came for a while: ask the broker on the consumer's channel whether anything is ready.
        const ready = await this.readyOn(generation.channel)
        // The queue answers that query ahead of its pending work, so deliveries it made just
        // before may still be queued in the channel; a channel-local round trip lets them out.
        await this.settle(generation.channel)
        if (this.deliveredTotal > before) continue
        if (ready === 0 || Date.now() - idleSince >= this.maxIdleMs) this.exhausted = true
      }
      const batch: ReservedMessage[] = []
      while (batch.length < want && this.buffered() > 0) {
        const {message, generation} = this.buffer[this.bufferHead]
        this.buffer[this.bufferHead++] = undefined as never
        const seq = this.handedTotal++
        const handle: Handle = {session: this, seq, generation, message}
        this.outstanding.set(seq, handle)
        batch.push({...toBrokerMessage(message, String(seq)), handle})
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
        if (freed > 0 && deliveredBefore + active.acked + freed + active.prefetch > this.limit) {
          await this.awaitGranted(active)
          await this.stopConsuming()
        }
      }
      const touched = new Set<Generation>()
      for (const handle of handles) {
        try {
          handle.generation.channel.ack(handle.message)
        } catch (error) {
          // amqplib refuses at once on a closed channel: the broker returns the message itself.
          throw this.guard.failure ?? this.wrap('acknowledge', error, handle.generation.channel)
        }
        handle.generation.acked++
        this.ackedTotal++
        const slot = this.channels.get(handle.generation.channel)
        if (slot) slot.held--
        this.outstanding.delete(handle.seq)
        touched.add(handle.generation)
      }
      // Resolve only once the broker applied the acks, not when they sit in a socket buffer.
      for (const generation of touched) await this.barrier(generation.channel)
      // A finished window whose every delivery is acked holds nothing: free its channel.
      for (const generation of touched) {
        if (generation !== this.active && generation.cancelled) await this.retire(generation.channel)
      }
    })
  }

  async release(messages: ReservedMessage[]): Promise<void> {
    if (messages.length === 0) return
    return this.lock.run(async () => {
      const handles = this.own(messages, 'release')
      // Nothing to tell the broker: the message stays un-acked (so it is not delivered again in
      // this run) and goes back to the queue when its channel closes.
      for (const handle of handles) {
        this.outstanding.delete(handle.seq)
        this.releasedCount++
      }
    })
  }

  async close(): Promise<void> {
    return this.guard.close(async () => {
      this.onClosed?.()
      this.arrivals.wake()
      await this.lock.run(async () => {
        const lost = this.guard.failure instanceof ConnectionError
        if (!lost && !this.control.bqClosed) {
          try {
            await this.stopConsuming()
            // Requeue explicitly, then close: a classic queue puts every un-acked message back at
            // its original position. (Closing alone would do the same; this keeps it deterministic.)
            const returning = this.deliveredTotal - this.ackedTotal
            const readyBefore = (await this.control.checkQueue(this.queue)).messageCount
            for (const channel of this.channels.keys()) if (!channel.bqClosed) channel.nackAll(true)
            if (returning > 0) await waitUntilReady(this.control, this.queue, readyBefore + returning)
          } catch {
            // The channel or connection is going away: the broker requeues un-acked messages itself.
          }
        }
        for (const channel of this.channels.keys()) {
          channel.bqRetiring = true
          await closeQuietly(channel)
        }
        this.channels.clear()
        this.control.bqRetiring = true
        await closeQuietly(this.control)
        await closeConnection(this.connection)
      })
    })
  }

  /** Starts consuming with a fresh window sized to what the bound still allows. */
  private async startGeneration(): Promise<void> {
    await this.stopConsuming()
    const remaining = this.limit - this.deliveredTotal
    const previous = this.active
    // A channel with nothing un-acked on it can carry the next consumer; otherwise a new one.
    let reuse: WatchedChannel | undefined
    for (const [channel, slot] of this.channels) {
      if (slot.held === 0 && !channel.bqClosed) {
        reuse = channel
        if (channel === previous?.channel) break
      }
    }
    // Keep within the channel budget: the channels left must be able to hold what remains.
    const channelsLeft = this.maxChannels - this.channels.size + (reuse ? 1 : 0)
    // With the budget spent, share the previous generation's channel rather than open one more.
    if (reuse === undefined && channelsLeft <= 0 && previous !== undefined && !previous.channel.bqClosed) reuse = previous.channel
    const floor = this.nextGeneration === 1 ? 0 : Math.ceil(remaining / Math.max(1, channelsLeft))
    const prefetch = Math.min(Math.max(this.readAhead, floor), remaining, MAX_PREFETCH)
    if (prefetch <= 0) {
      this.exhausted = true
      return
    }
    let channel: WatchedChannel
    try {
      channel = reuse ?? (await quietChannel(this.connection))
    } catch (error) {
      throw this.guard.failure ?? this.wrap('open a channel', error)
    }
    if (!reuse) this.watch(channel)
    const generation: Generation = {id: this.nextGeneration++, channel, prefetch, delivered: 0, acked: 0, cancelled: false}
    const slot = this.channels.get(channel)
    if (slot) slot.owner = generation
    else this.channels.set(channel, {owner: generation, held: 0})
    try {
      // Non-global: applies to the consumer started next (quorum queues refuse a global prefetch).
      await channel.prefetch(prefetch, false)
      const ok = await channel.consume(this.queue, (message) => this.onDelivery(generation, message), {noAck: false})
      generation.tag = ok.consumerTag
    } catch (error) {
      throw this.guard.failure ?? this.wrap('start consuming', error, channel)
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
    const slot = this.channels.get(generation.channel)
    if (slot) slot.held++
    this.buffer.push({message, generation})
    this.arrivals.wake()
  }

  /** Cancels the running consumer; deliveries it already made stay un-acked and usable. */
  private async stopConsuming(): Promise<void> {
    const generation = this.active
    if (generation === undefined || generation.cancelled) return
    generation.cancelled = true
    if (generation.tag === undefined || generation.channel.bqClosed) return
    try {
      await generation.channel.cancel(generation.tag)
    } catch (error) {
      throw this.guard.failure ?? this.wrap('cancel the consumer', error, generation.channel)
    }
  }

  /**
   * Before a quorum consumer is cancelled at the bound: lets the deliveries the queue already
   * granted it arrive, so the cancel strands none. Its window is full (nothing can be in flight),
   * or the bound is reached, or the queue has nothing ready and nothing came within a settle round
   * trip and one idle check. Within the bound throughout: the window was sized for it.
   */
  private async awaitGranted(generation: Generation): Promise<void> {
    if (!this.quorum) return
    let quietChecks = 0
    while (generation.delivered - generation.acked < generation.prefetch && this.deliveredTotal < this.limit && !generation.cancelled) {
      const before = generation.delivered
      await this.settle(generation.channel)
      if (generation.delivered > before) continue
      const ready = await this.readyOn(generation.channel)
      await this.arrivals.wait(this.idleCheckMs)
      this.guard.checkOpen('acknowledge messages')
      if (generation.delivered > before) continue
      // Nothing ready and nothing arrived: nothing is in flight. Ready but not coming (another
      // consumer ahead of this one): give up after a few checks; the cancel then strands nothing new.
      if (ready === 0 || ++quietChecks >= 4) return
    }
  }

  /** Closes the channel of a finished generation that holds nothing un-acked. */
  private async retire(channel: WatchedChannel): Promise<void> {
    const slot = this.channels.get(channel)
    if (slot === undefined || slot.held > 0 || slot.owner === this.active) return
    this.channels.delete(channel)
    channel.bqRetiring = true
    await closeQuietly(channel)
  }

  /** A channel closed by the broker (not by this session) ends the drain. */
  private watch(channel: WatchedChannel): void {
    channel.on('close', () => {
      if (this.guard.isClosed || channel.bqRetiring) return
      const closed = () => new BqError(`RabbitMQ closed a drain channel of queue "${this.queue}"${channel.bqClosedBecause ? `: ${channel.bqClosedBecause}` : ''}; its un-acked messages went back to the queue`, {code: 'channel-closed'})
      if (channel.bqClosedBecause !== undefined) this.fail(closed())
      // Closed without a channel error: the connection went, and its 'close' (emitted right after
      // the channels') says why; fall back to the channel message only if it does not come.
      else setImmediate(() => this.guard.failure === undefined && !this.guard.isClosed && this.fail(closed()))
    })
  }

  private buffered(): number {
    return this.buffer.length - this.bufferHead
  }

  private async readyOn(channel: WatchedChannel): Promise<number> {
    try {
      return (await channel.checkQueue(this.queue)).messageCount
    } catch (error) {
      throw this.guard.failure ?? this.wrap('check the queue', error, channel)
    }
  }

  /**
   * basic.ack has no reply. A round trip on the same channel after the acks means the broker's
   * channel has taken them (they are not sitting in a socket buffer of ours) before ack()
   * resolves. The queue applies them asynchronously; a crash now would at worst return an acked
   * message (a duplicate on the target), never lose one.
   */
  private async barrier(channel: WatchedChannel): Promise<void> {
    try {
      await channel.checkQueue(this.queue)
    } catch (error) {
      throw this.guard.failure ?? this.wrap('confirm the acknowledgements', error, channel)
    }
  }

  /** basic.qos is answered by the channel itself, after it wrote every delivery queued before. */
  private async settle(channel: WatchedChannel): Promise<void> {
    try {
      await channel.prefetch(this.readAhead, false)
    } catch (error) {
      throw this.guard.failure ?? this.wrap('check the queue', error, channel)
    }
  }

  /** The handles behind messages this session handed out and has not settled. */
  private own(messages: ReservedMessage[], action: string): Handle[] {
    return this.guard.claim(messages, action, (handle) => this.outstanding.get(handle.seq))
  }

  private fail(error: BqError): void {
    this.guard.fail(error)
    this.arrivals.wake()
  }

  private wrap(action: string, error: unknown, channel?: WatchedChannel): BqError {
    const reason = channel?.bqClosedBecause ?? brokerReason(error)
    return new BqError(`RabbitMQ drain of "${this.queue}" on ${this.displayUrl} could not ${action}: ${reason || describeError(error)}`, {cause: error})
  }
}
