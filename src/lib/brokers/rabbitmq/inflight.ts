/**
 * `bq inflight ls` on RabbitMQ: what the queue's consumers hold unacknowledged, from the
 * management API (AMQP 0-9-1's queue.declare reports ready messages and consumers, never the
 * unacknowledged ones). Its figures are refreshed every few seconds (the broker's
 * collect_statistics_interval, 5 s by default), so they lag a delivery or an ack by that much.
 */
import type {InflightReport} from '../adapter.js'
import type {RabbitManagement} from './management.js'

/** The broker's default consumer_timeout (rabbitmq.conf), in effect since RabbitMQ 3.8.15. */
const DEFAULT_CONSUMER_TIMEOUT_MS = 30 * 60_000

const COUNTS_ONLY =
  'an unacknowledged message is held by the channel it was delivered on; AMQP 0-9-1 reads a message only by taking it, and no other client can take one already delivered'

/**
 * The broker-wide consumer_timeout is not visible through the API, and a per-queue one
 * (x-consumer-timeout, a consumer-timeout policy) is honoured only from RabbitMQ 3.12 on: so the
 * sentence names the default and how it is changed, not a value bq cannot confirm.
 */
const RETURNS_ITSELF =
  'RabbitMQ requeues unacknowledged messages itself, flagged redelivered, when the channel or connection they were delivered on closes ' +
  "(a crashed consumer's once the broker sees its connection gone: the socket closing, or missed heartbeats), and closes a channel that keeps a delivery unacknowledged past the consumer timeout " +
  `(consumer_timeout, ${DEFAULT_CONSUMER_TIMEOUT_MS / 60_000} min by default; per queue with x-consumer-timeout from RabbitMQ 3.12)`

/** The queue's figures, or undefined when the management API does not know the queue. */
export async function rabbitInflight(management: RabbitManagement, queue: string): Promise<InflightReport | undefined> {
  const stats = await management.queueStats(queue)
  if (stats === undefined) return undefined
  return {
    gauges: [
      {name: 'unacked', value: count(stats.messages_unacknowledged), help: 'delivered to a consumer and not yet acknowledged (messages_unacknowledged)'},
      {name: 'consumers', value: count(stats.consumers), help: 'consumers subscribed to the queue'},
    ],
    countsOnly: COUNTS_ONLY,
    returnsItself: RETURNS_ITSELF,
  }
}

/** The API leaves a figure out while a queue's stats are not collected yet: none counted. */
function count(value: number | undefined): number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : 0
}
