/**
 * A drain over one SQS queue (the source side of a redrive, and what browse reads with).
 *
 * SQS has no staging place and no positions: a receive hides a message for the visibility
 * timeout, DeleteMessage removes it, and a visibility of 0 returns it. So:
 * - next() receives (10 per call, a few calls at once) with the session's visibility timeout;
 *   once the caller streams, the next batch is received while it works on the current one;
 * - a heartbeat extends the visibility of every message the session holds before it runs out,
 *   so a long run keeps what it took; released messages stay hidden until close(), so one run
 *   never takes them twice;
 * - ack() deletes (DeleteMessageBatch, every entry checked); close() makes everything not deleted
 *   visible again. They return in no particular order: SQS keeps none on standard queues.
 * - A crash leaves the messages hidden until their visibility timeout runs out, then SQS returns
 *   them by itself; nothing needs recovering. A modest timeout (30 s default, `?visibility=`)
 *   keeps that wait short.
 *
 * The drain takes at most the ApproximateNumberOfMessages seen when it started (or `max`), and
 * ends early when SQS has nothing more to give. On a FIFO queue SQS hands out more of a message
 * group only once what it gave is deleted or visible again, so a caller must settle a batch
 * before asking for the next (the redrive engine does), and a message held back (released)
 * blocks the rest of its group until close. SQS caps a message's hidden time at 12 hours from its
 * receive: a run holding one longer loses the hold (it may be received elsewhere; never lost).
 */
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  ReceiveMessageCommand,
  type BatchResultErrorEntry,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs'

import {BqError} from '../../errors.js'
import type {DrainSession, ReservedMessage} from '../adapter.js'
import {SQS_BATCH_ENTRIES, forEachLimited, inBatches} from './batch.js'
import {toBrokerMessage} from './message.js'
import {DrainGuard} from '../shared/drain-guard.js'

/** Receive calls in flight at once while filling one next(); each asks for up to 10 messages. */
const RECEIVE_CONCURRENCY = 6
/** Delete and visibility calls in flight at once. */
const SETTLE_CONCURRENCY = 6
/** Entry errors that mean the receipt no longer holds the message (it was returned or taken by another consumer). */
const LOST_RECEIPT = new Set(['ReceiptHandleIsInvalid', 'MessageNotInflight', 'InvalidParameterValue', 'AWS.SimpleQueueService.MessageNotInflight'])

type State = 'out' | 'held' | 'deleted' | 'lapsed'

interface Reservation {
  readonly session: SqsDrainSession
  readonly messageId: string
  receiptHandle: string
  /** Unix ms at which SQS shows the message again unless the session extends it. */
  deadline: number
  state: State
}

export interface SqsDrainInit {
  client: SQSClient
  queue: string
  /** Undefined: the queue does not exist, so the drain is empty. */
  url: string | undefined
  /** How many messages this session may hand out in all. */
  limit: number
  visibilitySeconds: number
  /** ApproximateNumberOfMessages now: lets an empty pass end the drain without a long poll. */
  visibleCount(): Promise<number>
  wrap(what: string, error: unknown): BqError
  onClose?(): void
}

export class SqsDrainSession implements DrainSession {
  /** Every message held and not yet deleted, by MessageId. */
  private readonly live = new Map<string, Reservation>()
  private handedOut = 0
  /** Received ahead while the caller works on the previous batch: held like the rest, not handed out yet. */
  private readonly ahead: ReservedMessage[] = []
  private reading: Promise<void> | undefined
  private calls = 0
  private readonly guard: DrainGuard<Reservation>
  private readonly timer: NodeJS.Timeout | undefined
  private beating: Promise<void> | undefined
  private readonly visibilityMs: number

  constructor(private readonly init: SqsDrainInit) {
    this.guard = new DrainGuard(this, `SQS drain of "${init.queue}"`, init.onClose)
    this.visibilityMs = init.visibilitySeconds * 1000
    if (init.url !== undefined && init.limit > 0) {
      // Ticks often enough that every message is extended while at least half its timeout is left.
      this.timer = setInterval(() => this.tick(), Math.max(250, Math.floor(this.visibilityMs / 6)))
      this.timer.unref()
    }
  }

  async next(max: number): Promise<ReservedMessage[]> {
    const want = Math.min(this.guard.checkNext(max), this.init.limit - this.handedOut)
    const url = this.init.url
    if (want <= 0 || url === undefined) return []
    await this.reading
    const out: ReservedMessage[] = this.ahead.splice(0, want)
    // A short-poll pass that comes back empty ends the drain only once SQS counts no visible
    // messages, or a 1 s long poll finds none: a short poll asks only some of SQS's servers.
    let waitSeconds = 0
    while (out.length < want) {
      const pass = await this.receivePass(url, want - out.length, waitSeconds, out)
      if (pass.failure !== undefined) {
        // What did arrive is held (and returned at close); the caller never saw it.
        this.handedOut += out.length
        for (const message of out) (message.handle as Reservation).state = 'held'
        throw this.init.wrap(`receive from "${this.init.queue}"`, pass.failure)
      }
      if (!pass.sawEmpty) continue
      if (out.length > 0 || waitSeconds > 0) break
      let visible: number
      try {
        visible = await this.init.visibleCount()
      } catch (error) {
        throw this.init.wrap(`count the messages of "${this.init.queue}"`, error)
      }
      if (visible === 0) break
      waitSeconds = 1
    }
    this.handedOut += out.length
    // Once the caller streams (a second call), the next batch is received while it works on this
    // one. A first call takes no more than it asked for, so a one-off look holds nothing extra;
    // a short batch means the queue ran dry, so nothing is read ahead then either.
    if (this.calls++ > 0 && out.length === want) this.readAhead(url, Math.min(want, this.init.limit - this.handedOut - this.ahead.length))
    return out
  }

  /** Fills `ahead` with one short-poll pass; a failure is left for the next call's own receive to meet. */
  private readAhead(url: string, need: number): void {
    if (need <= 0) return
    this.reading = this.receivePass(url, need, 0, this.ahead).then(
      () => undefined,
      () => undefined,
    ).finally(() => {
      this.reading = undefined
    })
  }

  /**
   * Keeps up to RECEIVE_CONCURRENCY receives in flight (one for a long poll) until `need` messages
   * came or one receive came back empty. Never asks for more than `need` in all, so a drain takes
   * nothing beyond its bound.
   */
  private async receivePass(url: string, need: number, waitSeconds: number, out: ReservedMessage[]): Promise<{sawEmpty: boolean; failure?: unknown}> {
    let asked = 0
    let sawEmpty = false
    let failure: {error: unknown} | undefined
    const lane = async () => {
      while (!sawEmpty && failure === undefined && asked < need) {
        const size = Math.min(SQS_BATCH_ENTRIES, need - asked)
        asked += size
        const sentAt = Date.now()
        let messages: Message[]
        try {
          messages = await this.receive(url, size, waitSeconds)
        } catch (error) {
          failure ??= {error}
          return
        }
        // A short answer frees its unused share for the next receive.
        asked -= size - messages.length
        if (messages.length === 0) sawEmpty = true
        out.push(...this.admit(messages, sentAt))
      }
    }
    await Promise.all(Array.from({length: waitSeconds > 0 ? 1 : RECEIVE_CONCURRENCY}, lane))
    return failure === undefined ? {sawEmpty} : {sawEmpty, failure: failure.error}
  }

  async ack(messages: ReservedMessage[]): Promise<void> {
    const targets = this.reservations(messages, 'ack').filter((r) => r.state !== 'deleted')
    const problems: string[] = []
    let failedCalls = 0
    let firstCallError: unknown
    await forEachLimited(inBatches(targets, () => 1), SETTLE_CONCURRENCY, async (batch) => {
      let result
      try {
        result = await this.init.client.send(new DeleteMessageBatchCommand({QueueUrl: this.init.url, Entries: batch.map((r, i) => ({Id: String(i), ReceiptHandle: r.receiptHandle}))}))
      } catch (error) {
        failedCalls += batch.length
        firstCallError ??= error
        return
      }
      for (const success of result.Successful ?? []) this.settle(batch[Number(success.Id)], 'deleted')
      for (const failure of result.Failed ?? []) {
        const reservation = batch[Number(failure.Id)]
        // The receipt no longer holds the message: it is back on the queue or with another consumer.
        if (isLostReceipt(failure)) this.settle(reservation, 'lapsed')
        problems.push(`${failure.Code ?? 'error'}: ${failure.Message ?? ''}`.trim())
      }
    })
    if (firstCallError !== undefined) {
      const cause = this.init.wrap(`delete messages from "${this.init.queue}"`, firstCallError)
      throw new BqError(`${cause.message} (${failedCalls} message(s) not deleted; they stay on the queue)`, {code: cause.code, exitCode: cause.exitCode, cause: firstCallError})
    }
    if (problems.length > 0) {
      throw new BqError(`SQS did not delete ${problems.length} of ${targets.length} message(s) from "${this.init.queue}" (${problems[0]}); they may still be on the queue and be received again`, {code: 'ack-failed'})
    }
  }

  async release(messages: ReservedMessage[]): Promise<void> {
    // Kept hidden (the heartbeat extends them) until close, so this run never takes them again.
    for (const reservation of this.reservations(messages, 'release')) if (reservation.state === 'out') reservation.state = 'held'
  }

  async close(): Promise<void> {
    return this.guard.close(async () => {
      if (this.timer !== undefined) clearInterval(this.timer)
      await this.reading
      this.ahead.length = 0
      await this.beating
      const back = [...this.live.values()]
      if (back.length === 0) return
      let failed = 0
      let firstError: unknown
      await forEachLimited(inBatches(back, () => 1), SETTLE_CONCURRENCY, async (batch) => {
        try {
          const result = await this.changeVisibility(batch, 0)
          // A receipt that no longer holds its message needs no returning.
          failed += (result.Failed ?? []).filter((failure) => !isLostReceipt(failure)).length
        } catch (error) {
          failed += batch.length
          firstError ??= error
        }
      })
      this.live.clear()
      if (failed > 0) {
        const reason = firstError === undefined ? '' : `: ${this.init.wrap('return messages', firstError).message}`
        throw new BqError(`could not make ${failed} message(s) of "${this.init.queue}" visible again${reason}; SQS returns them by itself within ${this.init.visibilitySeconds} s`, {code: 'release-failed'})
      }
    })
  }

  private async receive(url: string, size: number, waitSeconds: number): Promise<Message[]> {
    const result = await this.init.client.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: size,
        VisibilityTimeout: this.init.visibilitySeconds,
        // Always explicit: a queue's own ReceiveMessageWaitTimeSeconds would otherwise apply.
        WaitTimeSeconds: waitSeconds,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    )
    return result.Messages ?? []
  }

  /** Registers received messages; one the session already holds (its hold lapsed and SQS gave it out again) is not handed out twice. */
  private admit(messages: Message[], sentAt: number): ReservedMessage[] {
    const fresh: ReservedMessage[] = []
    for (const message of messages) {
      if (message.MessageId === undefined || message.ReceiptHandle === undefined) continue
      const known = this.live.get(message.MessageId)
      if (known !== undefined) {
        known.receiptHandle = message.ReceiptHandle
        known.deadline = sentAt + this.visibilityMs
        continue
      }
      const reservation: Reservation = {session: this, messageId: message.MessageId, receiptHandle: message.ReceiptHandle, deadline: sentAt + this.visibilityMs, state: 'out'}
      this.live.set(message.MessageId, reservation)
      fresh.push({...toBrokerMessage(message), handle: reservation})
    }
    return fresh
  }

  private tick(): void {
    if (this.beating !== undefined || this.guard.isClosed) return
    this.beating = this.extendDue().finally(() => {
      this.beating = undefined
    })
  }

  /**
   * Extends every held message with less than half its visibility timeout left. A failure is not
   * thrown (nothing awaits a timer): the message may then be received by someone else, which a
   * later ack reports; it is never lost.
   */
  private async extendDue(): Promise<void> {
    const now = Date.now()
    const due = [...this.live.values()].filter((r) => r.deadline - now < this.visibilityMs / 2)
    if (due.length === 0) return
    await forEachLimited(inBatches(due, () => 1), SETTLE_CONCURRENCY, async (batch) => {
      const sentAt = Date.now()
      try {
        const result = await this.changeVisibility(batch, this.init.visibilitySeconds)
        for (const success of result.Successful ?? []) {
          const reservation = batch[Number(success.Id)]
          if (reservation.state === 'out' || reservation.state === 'held') reservation.deadline = sentAt + this.visibilityMs
        }
        for (const failure of result.Failed ?? []) if (isLostReceipt(failure)) this.settle(batch[Number(failure.Id)], 'lapsed')
      } catch {
        // Unreachable for now: the next tick tries again while time is left.
      }
    }).catch(() => undefined)
  }

  private changeVisibility(batch: Reservation[], seconds: number) {
    return this.init.client.send(
      new ChangeMessageVisibilityBatchCommand({QueueUrl: this.init.url, Entries: batch.map((r, i) => ({Id: String(i), ReceiptHandle: r.receiptHandle, VisibilityTimeout: seconds}))}),
    )
  }

  /** A reservation leaves the live set: deleted by us, or its receipt no longer holds the message. */
  private settle(reservation: Reservation | undefined, state: 'deleted' | 'lapsed'): void {
    if (reservation === undefined || reservation.state === 'deleted') return
    reservation.state = state
    if (this.live.get(reservation.messageId) === reservation) this.live.delete(reservation.messageId)
  }

  /**
   * The reservations behind handles this session gave out. Settled ones pass too: ack skips what
   * is deleted and release what is held, and a lapsed one is for SQS to refuse.
   */
  private reservations(messages: ReservedMessage[], action: string): Reservation[] {
    return this.guard.claim(messages, action, (reservation) => reservation)
  }
}

function isLostReceipt(failure: BatchResultErrorEntry): boolean {
  return failure.Code !== undefined && LOST_RECEIPT.has(failure.Code)
}
