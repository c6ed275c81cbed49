/**
 * What bq reads from a Pulsar topic, and how it reads it without side effects.
 *
 * The queue bq shows is one subscription's backlog (`bq-redrive` unless the URL names another):
 * the messages after its mark-delete position that it has not acknowledged individually. Before
 * that subscription exists, it is every message the topic still stores (what the subscription
 * would receive if created at the earliest position, as a drain creates it).
 *
 * Reading goes through the WebSocket *reader* endpoint: a reader is a non-durable cursor, so it
 * neither creates a subscription nor acknowledges anything, and the backlog, redelivery counts
 * and stored cursors stay exactly as they were. The admin REST API supplies where the view starts
 * (the subscription's mark-delete position and acknowledged ranges) and where it ends (the last
 * stored entry when the read began), so a read is bounded and never waits for new messages.
 */
import {pulsarNativeFields} from './binding.js'
import {PULSAR_CLIENT_PROPERTIES, pulsarAppHeaders} from './app-headers.js'
import type {BrokerMessage} from '../adapter.js'
import type {InternalStats, PulsarAdmin} from './admin.js'
import {comparePositions, decodeMessageId, encodeMessageId, formatPosition, inDeletedRanges, parseDeletedRanges, parsePosition, type Position} from './message-id.js'
import {queueOfTopic, type PulsarTarget, type Topic} from './url.js'
import {Inbox, type WsMessage} from './websocket.js'
import {pulsarNativeProperties} from './restore.js'

/** A native dead-letter topic's messages carry these properties (set by Pulsar's DLQ producer). */
export const NATIVE_DLQ_REASON = 'max_redeliver_count'
const REAL_TOPIC = PULSAR_CLIENT_PROPERTIES.realTopic
const ORIGIN_MESSAGE_ID = PULSAR_CLIENT_PROPERTIES.originMessageId

/** How long a reader may stay silent while the view says more messages exist. */
export const READ_IDLE_MS = 15_000

export interface View {
  /** The reader's start: `earliest`, or a base64 message id it starts right after. */
  start: string
  /** Entries acknowledged individually by the subscription (skipped). */
  deleted: ReturnType<typeof parseDeletedRanges>
  /** The last stored entry when the view was taken. */
  end: {ledger: number; entry: number}
  /** Whether the view is the subscription's backlog (true) or every stored message. */
  viaSubscription: boolean
  /** Entries in the view by the broker's own count (one per message for bq's unbatched publishing). */
  entries: number
}

/** The view of a topic, or undefined when the topic does not exist. */
export async function takeView(admin: PulsarAdmin, topic: Topic, subscription: string): Promise<View | undefined> {
  const stats = await admin.internalStats(topic)
  if (stats === undefined) return undefined
  const end = parsePosition(stats.lastConfirmedEntry) ?? {ledger: -1, entry: -1}
  const cursor = stats.cursors?.[subscription]
  if (cursor !== undefined) {
    const markDelete = parsePosition(cursor.markDeletePosition) ?? {ledger: -1, entry: -1}
    const deleted = parseDeletedRanges(cursor.individuallyDeletedMessages)
    const backlog = (await admin.stats(topic))?.subscriptions?.[subscription]?.msgBacklog
    const entries = comparePositions(markDelete, end) >= 0 ? 0 : (backlog ?? entriesAfter(stats, markDelete))
    return {start: encodeMessageId(markDelete.ledger, markDelete.entry), deleted, end, viaSubscription: true, entries}
  }
  return {start: 'earliest', deleted: [], end, viaSubscription: false, entries: stats.numberOfEntries ?? 0}
}

/** Stored entries after a position, from the ledger list (a fallback when the backlog is not reported). */
function entriesAfter(stats: InternalStats, after: {ledger: number; entry: number}): number {
  let total = 0
  const ledgers = stats.ledgers ?? []
  for (const [i, ledger] of ledgers.entries()) {
    const count = i === ledgers.length - 1 ? (stats.currentLedgerEntries ?? ledger.entries) : ledger.entries
    if (ledger.ledgerId > after.ledger) total += count
    else if (ledger.ledgerId === after.ledger) total += Math.max(0, count - (after.entry + 1))
  }
  return total
}

/**
 * Streams the messages of a view in order, skipping acknowledged entries, and stops at the
 * view's end. Every message is answered on the socket, which is only the reader endpoint's flow
 * control (it acknowledges nothing on the broker).
 */
export class ViewReader {
  private done = false

  private constructor(
    private readonly inbox: Inbox,
    private readonly view: View,
    private readonly idleMs: number,
  ) {}

  static async open(target: PulsarTarget, displayUrl: string, topic: Topic, view: View, idleMs = READ_IDLE_MS): Promise<ViewReader> {
    const params = new URLSearchParams({messageId: view.start, receiverQueueSize: '1000', readerName: `bq-reader-${process.pid}`})
    const inbox = await Inbox.open(target, displayUrl, `/ws/v2/reader/${topic.path}?${params.toString()}`, `read ${topic.local}`, `reading ${topic.local} on ${displayUrl}`)
    return new ViewReader(inbox, view, idleMs)
  }

  /** The next message of the view, or undefined at its end. */
  async next(): Promise<{message: WsMessage; position: Position} | undefined> {
    while (!this.done) {
      const message = await this.inbox.receive(this.idleMs)
      // Silence although the view says more exist (entries the broker does not deliver to
      // readers, such as markers): the view ends here.
      if (message === undefined) break
      await this.inbox.send({messageId: message.messageId})
      const position = decodeMessageId(message.messageId)
      if (position === undefined) continue
      const cmp = comparePositions({ledger: position.ledger, entry: position.entry}, this.view.end)
      if (cmp > 0) break
      const last = cmp === 0 && (position.batchIndex < 0 || position.batchIndex >= position.batchSize - 1)
      if (last) this.done = true
      if (inDeletedRanges(position, this.view.deleted)) continue
      return {message, position}
    }
    this.done = true
    return undefined
  }

  async close(): Promise<void> {
    this.done = true
    await this.inbox.close()
  }
}

/** The bq-delay property (relative ms, mirrored by every BabelQueue producer) says the message is not due yet. */
export function notDueYet(message: WsMessage, now = Date.now()): boolean {
  const delay = Number(message.properties?.['bq-delay'])
  const published = Date.parse(message.publishTime ?? '')
  return Number.isFinite(delay) && delay > 0 && Number.isFinite(published) && published + delay > now
}

/** A delivered message as bq shows it: exact bytes, Pulsar's metadata, the inverse projection. */
export function toBrokerMessage(message: WsMessage, position: Position | undefined, target: Pick<PulsarTarget, 'tenant' | 'namespace'>): BrokerMessage {
  const properties = message.properties ?? {}
  const headers: Record<string, unknown> = {
    message_id: position === undefined ? message.messageId : formatPosition(position),
    publish_time: message.publishTime ?? null,
    redelivery_count: message.redeliveryCount ?? 0,
    properties: {...properties},
  }
  if (message.key !== undefined) headers.key = message.key
  if (message.eventTime !== undefined) headers.event_time = message.eventTime
  const native = pulsarNativeFields(properties, message.redeliveryCount ?? 0)
  const realTopic = properties[REAL_TOPIC]
  if (realTopic !== undefined && realTopic !== '') {
    native.nativeDeadLetter = {reason: NATIVE_DLQ_REASON, originalQueue: queueOfTopic(realTopic, target)}
    if (properties[ORIGIN_MESSAGE_ID] !== undefined) headers.origin_message_id = properties[ORIGIN_MESSAGE_ID]
  }
  const result: BrokerMessage = {body: Buffer.from(message.payload ?? '', 'base64'), headers, native, appHeaders: pulsarAppHeaders(properties), nativeProperties: pulsarNativeProperties(message)}
  if (position !== undefined) result.position = formatPosition(position)
  const published = Date.parse(message.publishTime ?? '')
  if (Number.isFinite(published)) result.enqueuedAt = published
  return result
}
