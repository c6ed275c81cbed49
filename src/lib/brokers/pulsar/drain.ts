/**
 * A drain over one Pulsar topic through bq's own durable subscription (`bq-redrive` unless the
 * URL names another), on the WebSocket consumer endpoint in pull mode: bq asks for exactly as
 * many messages as `next` wants, so holding released messages never stalls delivery.
 *
 * - ack: the message is acknowledged on the subscription (call only after the target confirmed).
 * - release: nothing is sent. The message stays un-acknowledged; when the consumer closes, the
 *   broker keeps it in the subscription's backlog at its original position, and the next reader
 *   or consumer gets it again. With the default Exclusive subscription its redelivery count does
 *   not change (Pulsar counts redeliveries only on Shared subscriptions; with
 *   `subscription_type=Shared` closing raises the count of every message still held).
 * - crash: the socket drops, the broker closes the consumer and the same happens as for release:
 *   nothing is staged anywhere, so `recover()` has nothing to do.
 *
 * The drain is bounded by the subscription's backlog when it started (and `max`). The WebSocket
 * API does not confirm acknowledgements, so `close` waits until the broker reports the consumer
 * gone: the proxy flushes its pending acknowledgements before it closes the consumer.
 *
 * That holds when the broker answers bq's close frame (it reads frames in order, so it has read
 * every ack). When the socket was lost instead, acks still in flight were dropped and their
 * messages return: `close` then waits for the consumer to go, reads the subscription's cursor
 * and counts the acks it does not show applied (`unlandedAcks`, SentAcks). Nothing of this runs
 * on a run without a fault: an ack costs no round trip.
 */
import {BqError, ConnectionError, describeError} from '../../errors.js'
import type {DrainSession, ReservedMessage, UnlandedAcks} from '../adapter.js'
import type {PulsarAdmin} from './admin.js'
import {decodeMessageId, type Position} from './message-id.js'
import {notDueYet, toBrokerMessage} from './read.js'
import type {PulsarTarget, Topic} from './url.js'
import type {Inbox} from './websocket.js'
import {DrainGuard} from '../shared/drain-guard.js'
import {SentAcks} from './sent-acks.js'

/** How long `next` waits for a message the backlog says exists before it ends the drain. */
export const DRAIN_IDLE_MS = 15_000
/** How long `close` waits for the broker to see the consumer gone (and so its acks applied). */
export const CLOSE_SETTLE_MS = 20_000
/** After the first message of a batch, how long `next` waits for each further one. */
const BATCH_GAP_MS = 20

interface Handle {
  session: PulsarDrainSession
  messageId: string
  position: Position | undefined
  settled: boolean
}

export interface PulsarDrainInit {
  inbox: Inbox
  admin: PulsarAdmin
  target: PulsarTarget
  displayUrl: string
  topic: Topic
  /** The consumer name the drain subscribed with (how the stats list it). */
  consumerName: string
  /** Messages this run may take: the backlog at start, capped by max. */
  limit: number
  idleMs?: number
  onClose(): void
}

export class PulsarDrainSession implements DrainSession {
  private taken = 0
  /** Permits granted to the broker whose messages `next` has not taken yet (buffered or on their way). */
  private permits = 0
  /** Handed out and neither acknowledged nor released (for count()). */
  outstanding = 0
  /** Set by close() after a lost connection: acks the broker never applied (DrainSession). */
  unlandedAcks: UnlandedAcks | undefined
  private readonly sent = new SentAcks()
  private readonly guard: DrainGuard<Handle>

  constructor(private readonly init: PulsarDrainInit) {
    this.guard = new DrainGuard(this, `Pulsar drain of "${init.topic.local}"`, init.onClose)
  }

  get topicFull(): string {
    return this.init.topic.full
  }

  /** A lost socket with acks sent: close asks the cursor which landed (quick, the broker noticed the loss too). */
  get settlesAfterLoss(): boolean {
    return this.init.inbox.error !== undefined && this.sent.size > 0
  }

  async next(max: number): Promise<ReservedMessage[]> {
    const want = Math.min(this.guard.checkNext(max), this.init.limit - this.taken)
    if (want <= 0) return []
    const {inbox} = this.init
    // Granted permits cover both buffered messages and those still on their way.
    const ask = want - this.permits
    if (ask > 0) {
      await inbox.send({type: 'permit', permitMessages: ask})
      this.permits += ask
    }
    const out: ReservedMessage[] = []
    while (out.length < want && this.taken < this.init.limit) {
      // Wait long for the first message; after that only briefly, returning what has arrived.
      const message = await inbox.receive(out.length === 0 ? (this.init.idleMs ?? DRAIN_IDLE_MS) : BATCH_GAP_MS)
      if (message === undefined) {
        if (out.length === 0) this.taken = this.init.limit // the backlog promised more than came: done
        break
      }
      this.permits = Math.max(0, this.permits - 1)
      this.taken++
      // A message whose delivery is still delayed is not in the queue yet: leave it un-acked.
      if (notDueYet(message)) continue
      const position = decodeMessageId(message.messageId)
      const handle: Handle = {session: this, messageId: message.messageId, position, settled: false}
      out.push({...toBrokerMessage(message, position, this.init.target), handle})
      this.outstanding++
    }
    // Ask for the next batch now, so it arrives while the caller publishes this one. Never beyond
    // the drain's limit; what is prefetched and never handed out stays un-acknowledged.
    const ahead = Math.min(want, this.init.limit - this.taken) - this.permits
    if (ahead > 0 && out.length > 0) {
      await inbox.send({type: 'permit', permitMessages: ahead})
      this.permits += ahead
    }
    return out
  }

  async ack(messages: ReservedMessage[]): Promise<void> {
    const handles = this.handles(messages, 'ack')
    for (const handle of handles) {
      await this.init.inbox.send({messageId: handle.messageId})
      handle.settled = true
      this.outstanding--
    }
    // Recorded once the whole call went out: a call that fails is the caller's to count whole.
    for (const handle of handles) this.sent.add(handle.position)
  }

  async release(messages: ReservedMessage[]): Promise<void> {
    // Nothing goes to the broker: an un-acknowledged message returns when the consumer closes.
    for (const handle of this.handles(messages, 'release')) {
      handle.settled = true
      this.outstanding--
    }
  }

  async close(): Promise<void> {
    return this.guard.close(async () => {
      const sent = this.sent.size
      // Until close knows better, every sent ack counts: a close cut short leaves this upper bound.
      if (sent > 0) this.unlandedAcks = {count: sent, sent, exact: false, reason: 'bq stopped waiting for the broker'}
      try {
        const failedBefore = this.init.inbox.error
        const answered = await this.init.inbox.close()
        if (failedBefore === undefined && answered) {
          if (!(await this.waitConsumerGone())) {
            throw new BqError(`the broker still lists bq's consumer on subscription ${this.init.target.subscription} of ${this.init.topic.local} ${CLOSE_SETTLE_MS / 1000}s after bq closed its drain; its acknowledgements may not be applied, so some moved messages may be redriven again (duplicates, nothing lost)`)
          }
          // The broker read every ack before our close frame and applied them before dropping the consumer.
          this.unlandedAcks = undefined
          return
        }
        await this.countUnlandedAcks()
      } finally {
        this.outstanding = 0
      }
    })
  }

  /**
   * After a lost connection: which sent acks the subscription's cursor shows applied, once the
   * broker dropped the consumer (later acks of it can no longer land). Throws a ConnectionError
   * when some did not land, so a run that had ended well still reports the fault.
   */
  private async countUnlandedAcks(): Promise<void> {
    const sent = this.sent.size
    if (sent === 0) return
    const {admin, topic, target} = this.init
    let unlanded: UnlandedAcks
    try {
      const gone = await this.waitConsumerGone()
      const cursor = (await admin.internalStats(topic))?.cursors?.[target.subscription]
      const count = this.sent.notApplied(cursor)
      // With the consumer still listed, an ack may yet land: the count is then at most.
      unlanded = gone ? {count, sent, exact: true} : {count, sent, exact: false, reason: `the broker still listed bq's consumer after ${CLOSE_SETTLE_MS / 1000}s`}
    } catch (error) {
      unlanded = {count: sent, sent, exact: false, reason: describeError(error)}
    }
    this.unlandedAcks = unlanded.count === 0 ? undefined : unlanded
    if (unlanded.count === 0) return
    const where = `subscription ${target.subscription} of ${topic.local} on ${this.init.displayUrl}`
    throw new ConnectionError(
      unlanded.exact
        ? `the drain's connection was lost: ${unlanded.count} of the ${sent} acknowledgements bq sent never reached ${where}, so those messages are still there (and wherever they were copied)`
        : `the drain's connection was lost and whether the ${sent} acknowledgements bq sent reached ${where} could not be checked (${unlanded.reason}): up to ${unlanded.count} messages may still be there (and wherever they were copied)`,
    )
  }

  /** Resolves true once the subscription no longer lists this drain's consumer (the proxy sent our acks before closing it), false after CLOSE_SETTLE_MS. */
  private async waitConsumerGone(): Promise<boolean> {
    const {admin, topic, target, consumerName} = this.init
    const deadline = Date.now() + CLOSE_SETTLE_MS
    for (;;) {
      const stats = await admin.stats(topic, false)
      const consumers = stats?.subscriptions?.[target.subscription]?.consumers ?? []
      if (!consumers.some((consumer) => consumer.consumerName === consumerName)) return true
      if (Date.now() > deadline) return false
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }

  /** The handles behind messages this session handed out and has not settled. */
  private handles(messages: ReservedMessage[], action: string): Handle[] {
    return this.guard.claim(messages, action, (handle) => (handle.settled ? undefined : handle))
  }
}
