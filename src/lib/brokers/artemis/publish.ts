/**
 * Publishing to Artemis with at-least-once settlement: every transfer is sent unsettled and a
 * batch resolves only once the broker settled every one of them as `accepted` (Artemis accepts
 * only after routing the message to the queue, into its journal for a durable one). Any other
 * outcome, a refused or closed link, or a lost connection fails the whole batch; what was
 * accepted before stays published (a retry may then duplicate it, never lose it).
 *
 * Each queue gets one sender link, kept for the adapter's life, whose target is the address of
 * that name with the `queue` capability: Artemis then routes it ANYCAST and, with its default
 * auto-create settings, creates the address and a durable queue of the same name on first use.
 */
import type {Delivery, EventContext, Sender} from 'rhea'

import {AuthError, BqError} from '../../errors.js'
import type {OutgoingMessage} from '../adapter.js'
import {type ArtemisConnection, securityRefusal} from './connection.js'
import {toAmqpMessage} from './message.js'

/** A publish that sees no settlement and no credit for this long gives up (the broker is stuck, e.g. an address full with BLOCK). */
const STALL_TIMEOUT_MS = 60_000

export class ArtemisPublisher {
  private readonly senders = new Map<string, Sender>()

  constructor(private readonly connection: ArtemisConnection) {}

  async publish(queue: string, messages: OutgoingMessage[]): Promise<void> {
    if (messages.length === 0) return
    const sender = await this.senderFor(queue)
    try {
      await this.sendAll(sender, queue, messages)
    } catch (error) {
      // A sender that failed (refused outcome aside) is not trusted for the next batch.
      if (sender.is_closed() || this.connection.lost !== undefined) this.senders.delete(queue)
      throw error
    }
  }

  async close(): Promise<void> {
    for (const sender of this.senders.values()) await this.connection.closeLink(sender)
    this.senders.clear()
  }

  private async senderFor(queue: string): Promise<Sender> {
    const known = this.senders.get(queue)
    if (known !== undefined && !known.is_closed()) return known
    const sender = await this.connection.openSender({
      target: {address: queue, capabilities: ['queue']},
      // Unsettled transfers: the broker's disposition is the confirmation.
      snd_settle_mode: 0,
    })
    this.senders.set(queue, sender)
    return sender
  }

  private sendAll(sender: Sender, queue: string, messages: OutgoingMessage[]): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const ours = new Set<Delivery>()
      let next = 0
      let accepted = 0
      let failure: BqError | undefined
      let stallTimer: NodeJS.Timeout | undefined
      const total = messages.length

      const finish = (error?: Error) => {
        clearTimeout(stallTimer)
        sender.removeListener('sendable', pump)
        sender.removeListener('settled', onSettled)
        sender.removeListener('sender_close', onClose)
        unsubscribe()
        if (error !== undefined) reject(error)
        else resolve()
      }
      const armStall = () => {
        clearTimeout(stallTimer)
        stallTimer = setTimeout(() => {
          finish(new BqError(`Artemis neither confirmed nor accepted more messages for "${queue}" within ${STALL_TIMEOUT_MS / 1000}s (${accepted} of ${total} confirmed; is the address full?); the batch is not published`, {code: 'publish-failed'}))
        }, STALL_TIMEOUT_MS)
      }
      const settledAll = () => {
        if (ours.size > 0 || (next < total && failure === undefined)) return
        if (failure !== undefined) finish(failure)
        else finish()
      }
      const onSettled = (context: EventContext) => {
        const delivery = context.delivery
        if (delivery === undefined || !ours.delete(delivery)) return
        armStall()
        const outcome = outcomeOf(delivery)
        if (outcome === 'accepted') accepted++
        else failure ??= refusedOrFailed(delivery, queue, this.connection, `Artemis did not accept a message published to "${queue}" (${describeOutcome(delivery, this.connection)}); ${accepted} of ${total} were confirmed and the batch is not published`)
        if (failure === undefined) pump()
        settledAll()
      }
      const onClose = () => {
        const described = this.connection.describe(sender.error ?? 'no reason given')
        finish(securityRefusal(sender.error, described, `send to "${queue}"`) ?? new BqError(`Artemis closed the sender for "${queue}" after ${accepted} of ${total} messages were confirmed: ${described}; the batch is not published`, {code: 'publish-failed'}))
      }
      // Sends while the link has credit and rhea's outgoing window has room; resumes on 'sendable'
      // (new credit) and on each settlement (room in the window).
      const pump = () => {
        const now = Date.now()
        try {
          while (next < total && failure === undefined && sender.sendable()) {
            const delivery = sender.send(toAmqpMessage(messages[next], now))
            next++
            ours.add(delivery)
          }
        } catch (error) {
          // Nothing of this message went out; stop, and fail once the sent ones are settled.
          failure ??= new BqError(`could not send a message to "${queue}": ${this.connection.describe(error)}; ${accepted} of ${total} were confirmed and the batch is not published`, {code: 'publish-failed', cause: error})
          settledAll()
        }
      }

      const unsubscribe = this.connection.onLost((error) => finish(error))
      sender.on('sendable', pump)
      sender.on('settled', onSettled)
      sender.on('sender_close', onClose)
      armStall()
      pump()
    })
  }
}

/** The settled outcome's name: accepted, rejected, released or modified. */
export function outcomeOf(delivery: Delivery): string | undefined {
  const state = delivery.remote_state as {constructor?: {composite_type?: unknown}} | undefined
  const type = state?.constructor?.composite_type
  return typeof type === 'string' ? type : undefined
}

/** A message refused for lack of permission is exit 6 (naming it); any other refusal a publish failure. */
function refusedOrFailed(delivery: Delivery, queue: string, connection: ArtemisConnection, message: string): BqError {
  const error = (delivery.remote_state as {error?: unknown} | undefined)?.error
  const refusal = error === undefined || error === null ? undefined : securityRefusal(error, connection.describe(error), `send to "${queue}"`)
  return refusal === undefined ? new BqError(message, {code: 'publish-failed'}) : new AuthError(`${refusal.message}; the batch is not published`, 'permission', error)
}

function describeOutcome(delivery: Delivery, connection: ArtemisConnection): string {
  const outcome = outcomeOf(delivery) ?? 'settled without an outcome'
  const error = (delivery.remote_state as {error?: unknown} | undefined)?.error
  return error === undefined || error === null ? outcome : `${outcome}: ${connection.describe(error)}`
}
