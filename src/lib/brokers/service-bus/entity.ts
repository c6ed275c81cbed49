/**
 * Service Bus entity names as bq accepts them (entity paths, case-insensitive like Service Bus):
 * `orders` (a queue, or a topic when publishing), `orders/$DeadLetterQueue` (its dead-letter
 * sub-queue), `events/Subscriptions/audit` (a subscription) and `events/Subscriptions/audit/$DeadLetterQueue`.
 * `…/$Transfer/$DeadLetterQueue` names the transfer dead-letter sub-queue.
 */
import {UsageError} from '../../errors.js'

export type SubQueue = 'deadLetter' | 'transferDeadLetter'

export interface ServiceBusEntity {
  /** The path as given, for messages. */
  name: string
  /** Queue name, or topic name of a subscription. */
  queueOrTopic: string
  subscription?: string
  subQueue?: SubQueue
  /** Lower-cased full path, for keys (Service Bus names are case-insensitive). */
  key: string
}

const SUFFIX = /\/\$(deadletterqueue|transfer\/\$deadletterqueue)$/i

export function parseEntity(name: string, displayUrl: string): ServiceBusEntity {
  if (typeof name !== 'string' || name.trim() === '') throw new UsageError(`a queue name is required (broker ${displayUrl})`)
  const path = name.trim().replace(/^\/+|\/+$/g, '')
  let base = path
  let subQueue: SubQueue | undefined
  const suffix = SUFFIX.exec(path)
  if (suffix) {
    base = path.slice(0, suffix.index)
    subQueue = suffix[1].toLowerCase() === 'deadletterqueue' ? 'deadLetter' : 'transferDeadLetter'
  }
  const subscription = /^(.+?)\/subscriptions\/([^/]+)$/i.exec(base)
  if (base === '' || base.includes('$')) throw new UsageError(`"${name}" is not a Service Bus entity path: use <queue>, <queue>/$DeadLetterQueue, <topic>/Subscriptions/<name> or <topic>/Subscriptions/<name>/$DeadLetterQueue`)
  return {
    name: path,
    queueOrTopic: subscription ? subscription[1] : base,
    subscription: subscription ? subscription[2] : undefined,
    subQueue,
    key: path.toLowerCase(),
  }
}

/** Where a dead-lettered message came from: the queue or subscription that owns the sub-queue. */
export function ownerOf(entity: ServiceBusEntity): string {
  return entity.subscription === undefined ? entity.queueOrTopic : `${entity.queueOrTopic}/Subscriptions/${entity.subscription}`
}

/** Publishing targets a queue or a topic, never a subscription or a dead-letter sub-queue. */
export function publishTarget(name: string, displayUrl: string): ServiceBusEntity {
  const entity = parseEntity(name, displayUrl)
  if (entity.subQueue !== undefined) throw new UsageError(`Service Bus does not accept messages sent to a dead-letter sub-queue (${entity.name}): publish to ${ownerOf(entity)} instead`)
  if (entity.subscription !== undefined) throw new UsageError(`Service Bus does not accept messages sent to a subscription (${entity.name}): publish to the topic ${entity.queueOrTopic}`)
  return entity
}
