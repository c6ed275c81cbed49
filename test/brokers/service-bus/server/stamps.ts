/** The broker-set message annotations of a delivered or peeked message (Service Bus AMQP protocol guide). */
import {types, uuidBytes, type Typed} from './amqp-codec.js'
import type {StoredMessage} from './entities.js'

const STATE_CODE = {active: 0, deferred: 1, scheduled: 2} as const

export function deliveryAnnotations(message: StoredMessage, options: {peeked?: boolean; lockToken?: string; lockedUntil?: number}): Record<string, Typed | undefined> {
  const out: Record<string, Typed | undefined> = {
    'x-opt-sequence-number': types.wrap_long(message.seq),
    'x-opt-enqueued-time': types.wrap_timestamp(message.enqueuedAt),
  }
  if (options.lockToken !== undefined) out['x-opt-lock-token'] = types.wrap_uuid(uuidBytes(options.lockToken))
  if (options.lockedUntil !== undefined) out['x-opt-locked-until'] = types.wrap_timestamp(options.lockedUntil)
  if (options.peeked) out['x-opt-message-state'] = types.wrap_int(STATE_CODE[message.state])
  if (message.state === 'scheduled' && message.scheduledAt !== undefined) out['x-opt-scheduled-enqueue-time'] = types.wrap_timestamp(message.scheduledAt)
  return out
}
