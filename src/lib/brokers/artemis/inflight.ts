/**
 * `bq inflight ls` on Artemis: the queue's delivering, scheduled and consumer counts from the
 * management API. A delivered message belongs to the consumer it went to until that consumer
 * settles it: a browser sees only what is waiting, and management's listDeliveringMessages gives
 * a delivering message's properties without its body (the envelope). So: counts only.
 */
import {AuthError, BqError} from '../../errors.js'
import type {InflightReport} from '../adapter.js'
import type {ArtemisManagement, ManagementReply} from './management.js'

const COUNTS_ONLY =
  'a delivered message stays with the consumer it was delivered to until that consumer settles it: a browser sees only messages waiting to be delivered, and the management API lists a delivering message without its body'

const RETURNS_ITSELF =
  "Artemis puts an unsettled delivery back on the queue by itself when the consumer's link, session or connection closes " +
  '(a crashed consumer\'s once the broker sees the connection gone: the socket closing, or its TTL or idle timeout), sometimes counting a failed delivery ' +
  'toward max-delivery-attempts (10 by default, then the dead-letter address); it has no acknowledgement timeout, so a live consumer keeps what it holds. ' +
  'Scheduled messages join the queue at their scheduled delivery time'

export interface ArtemisInflightLookup {
  management: ArtemisManagement
  queue: string
  /** Whether management answers at all: the reply to an unknown queue is a generic failure. */
  managementAnswers(): Promise<boolean>
  /** Where, for messages: the redacted broker URL. */
  where: string
}

/** The queue's figures; undefined when the queue does not exist. */
export async function artemisInflight({management, queue, managementAnswers, where}: ArtemisInflightLookup): Promise<InflightReport | undefined> {
  const resource = `queue.${queue}`
  let replies: ManagementReply[]
  try {
    replies = await Promise.all(['deliveringCount', 'scheduledCount', 'consumerCount'].map((attribute) => management.attribute(resource, attribute)))
  } catch (error) {
    if (error instanceof BqError && error.code === 'management-refused') {
      throw new AuthError(`cannot read what is in flight on "${queue}" on ${where}: Artemis gives its delivering and scheduled counts only through its management API, and this user may not use it (give it the "manage" permission on activemq.management)`, 'permission', error)
    }
    throw error
  }
  const [delivering, scheduled, consumers] = replies
  if (!delivering.ok) {
    if (await managementAnswers()) return undefined
    throw new BqError(`cannot read what is in flight on "${queue}" on ${where}: Artemis management answered "${String(delivering.value)}"`, {code: 'cannot-count-inflight'})
  }
  return {
    gauges: [
      {name: 'delivering', value: figure(delivering), help: 'delivered to a consumer and not yet settled (DeliveringCount)'},
      {name: 'scheduled', value: figure(scheduled), help: 'waiting for their scheduled delivery time (ScheduledCount)'},
      {name: 'consumers', value: figure(consumers), help: 'consumers attached to the queue (ConsumerCount)'},
    ],
    countsOnly: COUNTS_ONLY,
    returnsItself: RETURNS_ITSELF,
  }
}

function figure(reply: ManagementReply): number {
  return reply.ok && typeof reply.value === 'number' && Number.isSafeInteger(reply.value) && reply.value >= 0 ? reply.value : 0
}
