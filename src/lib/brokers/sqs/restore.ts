/**
 * An SQS message's native properties for an export (NativeProperties), and the attributes that
 * put them back on a restore: every message attribute with its data type (String, Number, Binary
 * and custom types such as `Number.int`), and a FIFO message's group id, as the queue held them,
 * not the binding's projection of the body (docs/restore-fidelity.md).
 */
import type {Message, MessageAttributeValue} from '@aws-sdk/client-sqs'

import {REPLAY_BYPASS_HEADER} from '../../envelope/fields.js'
import type {NativeProperties, OutgoingMessage} from '../adapter.js'
import {fromNativeJson, toNativeJson} from '../shared/native-json.js'
import {BYPASS_MARKER_VALUE} from '../shared/native-values.js'

export const SQS_KIND = 'sqs'

export function sqsNativeProperties(message: Message): NativeProperties {
  const recorded: Record<string, unknown> = {}
  const attributes: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    const kept: Record<string, unknown> = {DataType: value.DataType}
    if (value.StringValue !== undefined) kept.StringValue = value.StringValue
    if (value.BinaryValue !== undefined) kept.BinaryValue = toNativeJson(value.BinaryValue)
    attributes[name] = kept
  }
  if (Object.keys(attributes).length > 0) recorded.MessageAttributes = attributes
  const group = message.Attributes?.MessageGroupId
  if (group !== undefined) recorded.MessageGroupId = group
  return {broker: SQS_KIND, properties: recorded}
}

/** The recorded message attributes (with the replay marker when asked); the caller adds bq-run-id where one is left. */
export function sqsRestoredAttributes(message: OutgoingMessage, native: NativeProperties): Record<string, MessageAttributeValue> {
  const attributes: Record<string, MessageAttributeValue> = {}
  for (const [name, value] of Object.entries((native.properties.MessageAttributes ?? {}) as Record<string, Record<string, unknown>>)) {
    const restored: MessageAttributeValue = {DataType: String(value.DataType)}
    if (typeof value.StringValue === 'string') restored.StringValue = value.StringValue
    if (value.BinaryValue !== undefined) restored.BinaryValue = fromNativeJson(value.BinaryValue) as Uint8Array
    attributes[name] = restored
  }
  if (message.bypass) attributes[REPLAY_BYPASS_HEADER] = {DataType: 'String', StringValue: BYPASS_MARKER_VALUE}
  return attributes
}

/** The recorded FIFO group, if any. */
export function sqsRestoredGroup(native: NativeProperties): string | undefined {
  const group = native.properties.MessageGroupId
  return typeof group === 'string' && group !== '' ? group : undefined
}
