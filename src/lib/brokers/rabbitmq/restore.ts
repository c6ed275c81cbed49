/**
 * A RabbitMQ message's native properties for an export (NativeProperties), and the publish
 * options that put them back on a restore: the basic properties and the whole headers table as
 * the broker held them, not the binding's projection of the body (docs/restore-fidelity.md).
 */
import type {MessageProperties, Options} from 'amqplib'

import {REPLAY_BYPASS_HEADER, RUN_ID_HEADER} from '../../envelope/fields.js'
import type {NativeProperties, OutgoingMessage} from '../adapter.js'
import {fromNativeJson, toNativeJson} from '../shared/native-json.js'
import {BYPASS_MARKER_VALUE} from '../shared/native-values.js'

import {PROPERTY_NAMES} from './property-names.js'

export const RABBITMQ_KIND = 'rabbitmq'

/** The basic properties a consumer sees and a publish can set: all but the deprecated cluster_id. */
const BASIC_PROPERTIES = PROPERTY_NAMES.filter(([name]) => name !== 'clusterId') as Array<[keyof MessageProperties & keyof Options.Publish, string]>

/** Counted by a quorum queue on each redelivery: the restored copy has not been delivered. */
const NOT_RESTORED_HEADERS = new Set(['x-delivery-count'])

export function rabbitNativeProperties(properties: MessageProperties): NativeProperties {
  const recorded: Record<string, unknown> = {}
  for (const [key, name] of BASIC_PROPERTIES) {
    const value = properties[key] as unknown
    if (value !== undefined && value !== null) recorded[name] = toNativeJson(value)
  }
  const headers = Object.entries((properties.headers ?? {}) as Record<string, unknown>).filter(([name]) => !NOT_RESTORED_HEADERS.has(name))
  if (headers.length > 0) recorded.headers = toNativeJson(Object.fromEntries(headers))
  return {broker: RABBITMQ_KIND, properties: recorded}
}

export interface RabbitRestore {
  options: Options.Publish
  /** What RabbitMQ would refuse, left out: `user_id` other than the connecting user's. */
  dropped?: {property: string; value: string}
}

/** The publish options of a restore; `connectedAs` is the connection's user (RabbitMQ checks user_id against it). */
export function rabbitRestoreOptions(message: OutgoingMessage, native: NativeProperties, connectedAs: string): RabbitRestore {
  const options: Options.Publish = {}
  const recorded = native.properties
  for (const [key, name] of BASIC_PROPERTIES) {
    if (recorded[name] !== undefined && recorded[name] !== null) (options as Record<string, unknown>)[key] = fromNativeJson(recorded[name])
  }
  const restore: RabbitRestore = {options}
  if (typeof options.userId === 'string' && options.userId !== connectedAs) {
    restore.dropped = {property: 'user_id', value: options.userId}
    delete options.userId
  }
  const headers = {...(fromNativeJson(recorded.headers ?? {}) as Record<string, unknown>)}
  if (message.bypass) headers[REPLAY_BYPASS_HEADER] = BYPASS_MARKER_VALUE
  if (message.runId !== undefined) headers[RUN_ID_HEADER] = message.runId
  if (Object.keys(headers).length > 0) options.headers = headers
  return restore
}
