/**
 * A received SQS message as bq shows and reasons about it: the body bytes, the native metadata
 * under SQS's own names (for `bq peek --headers`), and the inverse §3 projection.
 */
import type {Message, MessageAttributeValue} from '@aws-sdk/client-sqs'

import {sqsNativeFields} from './binding.js'
import {nonNegativeInt} from '../shared/native-values.js'
import {pickAppHeaders} from '../shared/app-headers.js'
import type {BrokerMessage} from '../adapter.js'
import {sqsNativeProperties} from './restore.js'

/**
 * What a native redrive policy records: SQS moves a message to the dead-letter queue once it was
 * received more than maxReceiveCount times, and marks where it came from.
 */
export const NATIVE_DLQ_REASON = 'max_receive_count'

export function toBrokerMessage(message: Message): BrokerMessage {
  const system = message.Attributes ?? {}
  const headers: Record<string, unknown> = {MessageId: message.MessageId ?? null, Attributes: {...system}}
  if (message.MessageAttributes !== undefined) headers.MessageAttributes = shownAttributes(message.MessageAttributes)
  const native = sqsNativeFields(message.MessageAttributes, system.ApproximateReceiveCount)
  const source = queueOfArn(system.DeadLetterQueueSourceArn)
  if (source !== undefined) native.nativeDeadLetter = {reason: NATIVE_DLQ_REASON, originalQueue: source}
  // SQS bodies are text; bq only ever sent valid UTF-8, so this is the original byte sequence.
  const result: BrokerMessage = {body: Buffer.from(message.Body ?? '', 'utf8'), headers, native, appHeaders: sqsAppHeaders(message.MessageAttributes), nativeProperties: sqsNativeProperties(message), position: system.SequenceNumber ?? message.MessageId}
  const sent = nonNegativeInt(system.SentTimestamp)
  if (sent !== undefined) result.enqueuedAt = sent
  return result
}

/**
 * The message attributes that are not bq's. Only plain `String` attributes: a Number, Binary or
 * custom-typed one written back as a String would change its type, so it is left out.
 */
function sqsAppHeaders(attributes: Record<string, MessageAttributeValue> | undefined): Record<string, string> {
  const strings = Object.entries(attributes ?? {}).filter(([, value]) => value.DataType === 'String').map(([name, value]) => [name, value.StringValue])
  return pickAppHeaders(Object.fromEntries(strings))
}

/** `arn:aws:sqs:us-east-1:123456789012:orders` → `orders`. */
export function queueOfArn(arn: string | undefined): string | undefined {
  if (arn === undefined) return undefined
  const parts = arn.split(':')
  return parts.length >= 6 && parts[2] === 'sqs' && parts[5] !== '' ? parts.slice(5).join(':') : undefined
}

function shownAttributes(attributes: Record<string, MessageAttributeValue>): Record<string, unknown> {
  const shown: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(attributes)) {
    const entry: Record<string, unknown> = {DataType: value.DataType}
    if (value.StringValue !== undefined) entry.StringValue = value.StringValue
    if (value.BinaryValue !== undefined) entry.BinaryValue = Buffer.from(value.BinaryValue).toString('base64')
    shown[name] = entry
  }
  return shown
}

/** Orders what one receive pass returned the way SQS stored it, as far as it says: send time, then FIFO sequence. */
export function compareSent(a: BrokerMessage, b: BrokerMessage): number {
  const byTime = (a.enqueuedAt ?? 0) - (b.enqueuedAt ?? 0)
  if (byTime !== 0) return byTime
  const sa = sequenceOf(a)
  const sb = sequenceOf(b)
  if (sa !== undefined && sb !== undefined && sa !== sb) return sa < sb ? -1 : 1
  return 0
}

function sequenceOf(message: BrokerMessage): bigint | undefined {
  const attributes = message.headers.Attributes as Record<string, string> | undefined
  const sequence = attributes?.SequenceNumber
  return sequence !== undefined && /^\d+$/.test(sequence) ? BigInt(sequence) : undefined
}
