/**
 * `bq inflight ls` on SQS: the queue's own approximate counts (GetQueueAttributes). A received
 * message is hidden from every other receive until its consumer deletes it or its visibility
 * timeout ends, and SQS has no read that is not a receive: so counts, never the messages.
 */
import type {InflightReport} from '../adapter.js'

/** The attributes read, all in one GetQueueAttributes call. */
export const INFLIGHT_ATTRIBUTES = ['ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed', 'VisibilityTimeout'] as const

const COUNTS_ONLY =
  'a received message is invisible to every other receive until its consumer deletes it or its visibility timeout ends, and SQS has no way to read a message other than receiving it'

export function sqsInflight(attributes: Partial<Record<string, string>>): InflightReport {
  const seconds = attributes.VisibilityTimeout
  // A consumer may ask for its own timeout on receive, or change it later: the queue's is the default.
  const timeout = seconds === undefined ? 'its visibility timeout ends' : `its visibility timeout ends (the queue's VisibilityTimeout is ${figure(seconds)} s, unless the consumer asked for another on receive or changed it since)`
  return {
    gauges: [
      {name: 'not_visible', value: figure(attributes.ApproximateNumberOfMessagesNotVisible), help: 'received and neither deleted nor visible again yet (ApproximateNumberOfMessagesNotVisible)'},
      {name: 'delayed', value: figure(attributes.ApproximateNumberOfMessagesDelayed), help: 'sent with a delay that has not ended yet (ApproximateNumberOfMessagesDelayed)'},
    ],
    countsOnly: COUNTS_ONLY,
    returnsItself:
      `SQS makes a received message that its consumer did not delete visible again by itself when ${timeout}; ` +
      'its receive has raised its ApproximateReceiveCount, which a RedrivePolicy counts toward maxReceiveCount. A delayed message becomes visible when its delay ends',
  }
}

/** SQS sends numbers as strings; approximate counts, never negative. */
function figure(value: string | undefined): number {
  const n = Number(value ?? 0)
  return Number.isSafeInteger(n) && n >= 0 ? n : 0
}
