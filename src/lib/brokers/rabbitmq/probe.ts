/**
 * What kind of queue a RabbitMQ queue is, found without touching a message.
 *
 * AMQP 0-9-1 has no "describe queue" method (the management HTTP API has one, but bq must not
 * require that plugin). A passive declare only says the queue exists. A non-passive re-declare
 * must repeat the queue's flags and arguments exactly, or RabbitMQ answers 406
 * PRECONDITION_FAILED naming the first argument that differs and its current value, e.g.
 *   inequivalent arg 'x-queue-type' for queue 'q' in vhost '/': received 'classic' but current is 'quorum'
 *   inequivalent arg 'x-message-ttl' for queue 'q' …: received none but current is the value '60000' of type 'signedint'
 * Measured on 3.10: other arguments (TTL, dead-letter exchange, max-length…) are compared before
 * x-queue-type, so a single re-declare with `x-queue-type: classic` fails on any classic queue
 * that has such an argument. The probe therefore adopts each value the broker reports and tries
 * again until the declare matches; the x-queue-type it ends with is the queue's type. A classic
 * queue declared without x-queue-type accepts `x-queue-type: classic` (measured).
 *
 * The caller checks the queue exists (passively) just before: a re-declare of a queue deleted in
 * between would create it again (an empty durable queue), which is the only side effect possible.
 */
import type {ChannelModel} from 'amqplib'

import {BqError} from '../../errors.js'
import {AMQP_PRECONDITION_FAILED, AMQP_RESOURCE_LOCKED, amqpCode, brokerReason, closeQuietly, quietChannel} from './support.js'

export interface QueueFacts {
  /** `classic`, `quorum`, `stream`, or whatever a newer broker reports. */
  type: string
  durable: boolean
  autoDelete: boolean
  /** The arguments the broker compares on re-declare (not every argument: 3.10 ignores x-delivery-limit). */
  arguments: Record<string, unknown>
}

/** Each attempt learns one argument; real queues carry a handful. */
const MAX_ATTEMPTS = 32

const INTEGER_TYPES = new Set(['byte', 'short', 'signedint', 'long', 'unsignedbyte', 'unsignedshort', 'unsignedint', 'signedshort', 'signedbyte'])

/** A field-table value the broker printed back, in a form amqplib encodes to the same type class. */
function fieldValue(text: string, type: string): unknown {
  if (type === 'longstr') return text
  if (type === 'bool' && (text === 'true' || text === 'false')) return text === 'true'
  if (INTEGER_TYPES.has(type) && /^-?\d+$/.test(text)) {
    const value = Number(text)
    return Number.isSafeInteger(value) ? value : undefined
  }
  if ((type === 'double' || type === 'float') && Number.isFinite(Number(text))) return {'!': 'double', value: Number(text)}
  return undefined
}

/**
 * The queue's type and compared arguments, or undefined when the broker's answer could not be
 * followed (an argument of a type bq cannot repeat, such as a table). Throws BqError for a queue
 * locked by another connection (exclusive).
 */
export async function probeQueue(connection: ChannelModel, queue: string): Promise<QueueFacts | undefined> {
  const args: Record<string, unknown> = {'x-queue-type': 'classic'}
  let durable = true
  let autoDelete = false
  let lastKey: string | undefined
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    // A failed declare closes its channel, so every attempt gets a fresh one.
    const channel = await quietChannel(connection)
    try {
      await channel.assertQueue(queue, {durable, autoDelete, exclusive: false, arguments: args})
      await closeQuietly(channel)
      return {type: String(args['x-queue-type']), durable, autoDelete, arguments: {...args}}
    } catch (error) {
      await closeQuietly(channel)
      const code = amqpCode(error)
      if (code === AMQP_RESOURCE_LOCKED) {
        throw new BqError(`RabbitMQ queue "${queue}" is exclusive to another connection: ${brokerReason(error)}`, {code: 'queue-locked', cause: error})
      }
      if (code !== AMQP_PRECONDITION_FAILED) throw error
      const reason = brokerReason(error)
      const match = /inequivalent arg '([^']+)' for .*?: received (.*) but current is (.*)$/s.exec(reason)
      if (!match) return undefined
      const [, key, , current] = match
      // The same argument twice means bq's repetition of it is not equivalent: give up, do not loop.
      if (key === lastKey) return undefined
      lastKey = key
      if (key === 'durable' || key === 'auto_delete') {
        const value = current === "'true'"
        if (key === 'durable') durable = value
        else autoDelete = value
        continue
      }
      if (current === 'none') {
        delete args[key]
        continue
      }
      const typed = /^the value '(.*)' of type '([a-z]+)'$/s.exec(current)
      if (typed) {
        const value = fieldValue(typed[1], typed[2])
        if (value === undefined) return undefined
        args[key] = value
        continue
      }
      const plain = /^'(.*)'$/s.exec(current)
      if (plain && key === 'x-queue-type') {
        args[key] = plain[1]
        continue
      }
      return undefined
    }
  }
  return undefined
}
