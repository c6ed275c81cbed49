/**
 * Publishing to SQS: every message becomes a SendMessageBatch entry whose MessageBody is the
 * envelope text and whose MessageAttributes are the §3 projection. A publish resolves only when
 * SQS accepted every entry; an entry it did not accept is retried a bounded number of times,
 * then the publish fails — it never counts an entry SQS did not take.
 */
import {SendMessageBatchCommand, type MessageAttributeValue, type SQSClient, type SendMessageBatchRequestEntry} from '@aws-sdk/client-sqs'

import {sqsMessageAttributes} from './binding.js'
import {BYPASS_MARKER_VALUE} from '../shared/native-values.js'
import {outgoingAppHeaders} from '../shared/app-headers.js'
import {REPLAY_BYPASS_HEADER, RUN_ID_HEADER} from '../../envelope/fields.js'
import {BqError, UsageError} from '../../errors.js'
import type {OutgoingMessage, PublishReceipt} from '../adapter.js'
import {forEachLimited, inBatches, sleep} from './batch.js'
import type {QueueFacts} from './client.js'
import {deduplicationId, republishNonce} from './dedup.js'
import {SQS_KIND, sqsRestoredAttributes, sqsRestoredGroup} from './restore.js'

/** SQS's longest DelaySeconds. */
export const MAX_DELAY_SECONDS = 900
/**
 * Bytes per SendMessageBatch. SQS's batch limit was 256 KiB and is 1 MiB since 2025; staying at
 * the old one costs a few more calls only for big messages and works on every endpoint. A message
 * larger than this is sent in a batch of its own.
 */
export const BATCH_BYTES = 262_144
/** Batches in flight at once on a standard queue (a FIFO queue gets one at a time, to keep order). */
const SEND_CONCURRENCY = 8
/** Sends of an entry SQS failed on its side (SenderFault false) before the publish fails. */
const ENTRY_ATTEMPTS = 4

/** Characters SQS accepts in a message body and in attribute values (XML 1.0's Char production). */
const REFUSED_CHARS = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u
const utf8 = new TextDecoder('utf-8', {fatal: true, ignoreBOM: true})

export interface PreparedEntry {
  /** Position in the publish call, also the batch entry Id. */
  index: number
  entry: Omit<SendMessageBatchRequestEntry, 'Id'>
  /** Size as SQS counts it: body plus attribute names, types and values. */
  bytes: number
}

/**
 * Checks what can be checked before anything is sent, so a refused message stops the whole publish
 * before its first batch: SQS carries text (valid UTF-8 of the characters above, not empty) and
 * delays up to 900 s, per message on standard queues only.
 */
export function checkOutgoing(queue: string, fifo: boolean, messages: OutgoingMessage[]): string[] {
  return messages.map((message, i) => {
    const delay = message.delayMs ?? 0
    if (delay > 0) {
      if (fifo) throw new UsageError(`"${queue}" is a FIFO queue: SQS takes no per-message delay there (only the queue's own DelaySeconds); publish without --delay`)
      if (Math.ceil(delay / 1000) > MAX_DELAY_SECONDS) throw new UsageError(`SQS delays delivery by at most ${MAX_DELAY_SECONDS} s (15 minutes); ${delay} ms is longer`)
    }
    if (message.body.length === 0) throw new BqError(`message ${i + 1} has an empty body, which SQS cannot carry`, {code: 'unsupported-body'})
    let text: string
    try {
      text = utf8.decode(message.body)
    } catch {
      throw new BqError(`message ${i + 1} is not valid UTF-8; SQS message bodies are text, so it cannot be sent to SQS byte for byte (nothing was published)`, {code: 'unsupported-body'})
    }
    const bad = REFUSED_CHARS.exec(text)
    if (bad !== null) {
      const code = bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')
      throw new BqError(`message ${i + 1} contains U+${code}, a character SQS refuses in message bodies; it cannot be sent to SQS (nothing was published)`, {code: 'unsupported-body'})
    }
    return text
  })
}

/** Builds the batch entries (attributes, FIFO group and deduplication id, delay) and checks sizes. */
export function prepareEntries(queue: string, facts: QueueFacts, group: string | undefined, messages: OutgoingMessage[], bodies: string[]): PreparedEntry[] {
  return messages.map((message, index) => {
    const restore = message.restore?.broker === SQS_KIND ? message.restore : undefined
    const attributes = restore === undefined ? withAppHeaders(messageAttributes(message), message, index) : withRunId(sqsRestoredAttributes(message, restore), message)
    const entry: Omit<SendMessageBatchRequestEntry, 'Id'> = {MessageBody: bodies[index]}
    if (Object.keys(attributes).length > 0) entry.MessageAttributes = attributes
    const delaySeconds = Math.ceil((message.delayMs ?? 0) / 1000)
    if (delaySeconds > 0) entry.DelaySeconds = delaySeconds
    if (facts.fifo) {
      entry.MessageGroupId = group ?? (restore === undefined ? undefined : sqsRestoredGroup(restore)) ?? queue
      // A content-deduplicated queue makes its own ids for plain publishes, as the binding says;
      // a re-publish always carries one (see dedup.ts: identical bodies would be dropped).
      if (message.republish || !facts.contentDedup) {
        entry.MessageDeduplicationId = deduplicationId(message.fields?.id, message.body, message.republish ? republishNonce() : undefined)
      }
    }
    const bytes = message.body.length + attributeBytes(attributes)
    if (bytes > facts.maxMessageBytes) {
      throw new BqError(`message ${index + 1} is ${bytes} bytes with its attributes; queue "${queue}" takes at most ${facts.maxMessageBytes} (nothing was published)`, {code: 'message-too-large'})
    }
    return {index, entry, bytes}
  })
}

function messageAttributes(message: OutgoingMessage): Record<string, MessageAttributeValue> {
  const projected: Record<string, MessageAttributeValue> = message.fields === null ? {} : {...sqsMessageAttributes(message.fields, {bypass: message.bypass})}
  if (message.bypass) projected[REPLAY_BYPASS_HEADER] = {DataType: 'String', StringValue: BYPASS_MARKER_VALUE}
  // SQS refuses an empty attribute value; an absent attribute reads the same to the inverse projection.
  for (const [name, value] of Object.entries(projected)) if (value.StringValue === '') delete projected[name]
  return projected
}

/** SQS's most message attributes on one message. */
export const MAX_MESSAGE_ATTRIBUTES = 10

/**
 * Adds the message's app headers as String attributes after bq's projection, which wins a clash.
 * They must all fit: a message whose app headers would push it past SQS's 10 attributes, or that
 * has an empty one (SQS refuses empty values), fails the publish instead of losing headers silently.
 */
function withAppHeaders(projected: Record<string, MessageAttributeValue>, message: OutgoingMessage, index: number): Record<string, MessageAttributeValue> {
  const app = Object.entries(outgoingAppHeaders({...message, runId: undefined})).filter(([name]) => !(name in projected))
  if (app.length === 0) return withRunId(projected, message)
  const total = Object.keys(projected).length + app.length
  if (total > MAX_MESSAGE_ATTRIBUTES) {
    const room = Math.max(0, MAX_MESSAGE_ATTRIBUTES - Object.keys(projected).length)
    throw new BqError(`message ${index + 1} has ${app.length} application headers but SQS carries at most ${MAX_MESSAGE_ATTRIBUTES} message attributes and bq's own take ${Object.keys(projected).length} (room for ${room}); nothing was published`, {code: 'too-many-headers'})
  }
  const empty = app.find(([, value]) => value === '')
  if (empty !== undefined) throw new BqError(`message ${index + 1} has an empty application header "${empty[0]}", which SQS cannot carry as a message attribute; nothing was published`, {code: 'unsupported-header'})
  const attributes = {...projected}
  for (const [name, value] of app) attributes[name] = {DataType: 'String', StringValue: value}
  return withRunId(attributes, message)
}

/** The run id (bq-run-id) is a pointer, not data: it rides only where an attribute is left, never failing a publish. */
function withRunId(attributes: Record<string, MessageAttributeValue>, message: OutgoingMessage): Record<string, MessageAttributeValue> {
  if (message.runId === undefined || Object.keys(attributes).length >= MAX_MESSAGE_ATTRIBUTES) return attributes
  return {...attributes, [RUN_ID_HEADER]: {DataType: 'String', StringValue: message.runId}}
}

function attributeBytes(attributes: Record<string, MessageAttributeValue>): number {
  let bytes = 0
  for (const [name, value] of Object.entries(attributes)) {
    bytes += Buffer.byteLength(name) + Buffer.byteLength(value.DataType ?? '') + Buffer.byteLength(value.StringValue ?? '') + (value.BinaryValue?.length ?? 0)
  }
  return bytes
}

export interface SendContext {
  client: SQSClient
  queue: string
  url: string
  fifo: boolean
  /** Wraps an SDK failure into a one-line bq error. */
  wrap(what: string, error: unknown): BqError
}

/**
 * Sends every entry and resolves once SQS accepted each one. `accepted` collects the indexes SQS
 * took, so a caller can resend only the rest (after re-creating a deleted queue) and report counts.
 */
export async function sendEntries(context: SendContext, entries: PreparedEntry[], accepted: Set<number>, receipt: PublishReceipt = {possiblyTwice: 0}): Promise<void> {
  const pending = entries.filter((entry) => !accepted.has(entry.index))
  const batches = inBatches(pending, (entry) => entry.bytes, 10, BATCH_BYTES)
  // FIFO order within a group is the order of the sends: one batch at a time.
  const messageIds = new Map<string, number>()
  const duplicates: number[] = []
  const onAccepted = (index: number, messageId: string) => {
    accepted.add(index)
    const earlier = messageIds.get(messageId)
    if (earlier !== undefined && earlier !== index) duplicates.push(index)
    else messageIds.set(messageId, index)
  }
  await forEachLimited(batches, context.fifo ? 1 : SEND_CONCURRENCY, (batch) => sendBatch(context, batch, onAccepted, receipt))
  if (duplicates.length > 0) {
    // Two entries of one call answered with one MessageId: SQS deduplicated one of them.
    throw new BqError(`SQS treated ${duplicates.length} message(s) published to "${context.queue}" as duplicates of others in the same publish (same deduplication id within 5 minutes) and will not deliver them`, {code: 'publish-deduplicated'})
  }
}

/** One batch, with bounded retries of the entries SQS failed on its side; reports each accepted entry as it is. */
async function sendBatch(context: SendContext, batch: PreparedEntry[], onAccepted: (index: number, messageId: string) => void, receipt: PublishReceipt): Promise<void> {
  const done = new Set<number>()
  let pending = batch
  let lastFailure = ''
  for (let attempt = 1; attempt <= ENTRY_ATTEMPTS && pending.length > 0; attempt++) {
    if (attempt > 1) await sleep(100 * 4 ** (attempt - 2))
    let result
    try {
      result = await context.client.send(new SendMessageBatchCommand({QueueUrl: context.url, Entries: pending.map((p) => ({...p.entry, Id: String(p.index)}))}))
    } catch (error) {
      throw context.wrap(`publish to "${context.queue}"`, error)
    }
    // The SDK re-sends a request whose answer a reset connection lost (maxAttempts in client.ts).
    // SQS may have stored the first send too; a FIFO queue's deduplication id absorbs it, a
    // standard queue keeps both, so the batch's messages are counted as possibly there twice.
    if ((result.$metadata.attempts ?? 1) > 1 && !context.fifo) receipt.possiblyTwice += (result.Successful ?? []).length
    for (const success of result.Successful ?? []) {
      const index = Number(success.Id)
      if (success.MessageId !== undefined && pending.some((p) => p.index === index) && !done.has(index)) {
        done.add(index)
        onAccepted(index, success.MessageId)
      }
    }
    const failed = result.Failed ?? []
    const refused = failed.find((failure) => failure.SenderFault === true)
    if (refused !== undefined) {
      throw new BqError(`SQS refused a message published to "${context.queue}": ${refused.Code ?? 'error'}: ${refused.Message ?? 'no reason given'}`, {code: 'publish-failed'})
    }
    if (failed.length > 0) lastFailure = `${failed[0].Code ?? 'error'}: ${failed[0].Message ?? 'no reason given'}`
    // An entry reported neither way is not counted as sent: it is sent again.
    pending = pending.filter((p) => !done.has(p.index))
    if (pending.length > 0 && failed.length === 0) lastFailure = 'SQS reported no result for some entries'
  }
  if (pending.length > 0) {
    throw new BqError(`SQS did not accept ${pending.length} message(s) published to "${context.queue}" after ${ENTRY_ATTEMPTS} attempts (${lastFailure})`, {code: 'publish-failed'})
  }
}
