/**
 * The few admin REST calls bq makes (Node's fetch; no client library): topic stats and internal
 * stats (backlog, cursors, ledgers), the last message id, subscription list and creation.
 * Every failure becomes a one-line BqError with the token scrubbed; a refused connection or a
 * time-out is a ConnectionError (exit 4).
 */
import {BqError, ConnectionError, describeError} from '../../errors.js'
import {scrubSecrets} from '../shared/redact.js'
import {tlsFailureReason} from '../shared/tls.js'
import {pulsarRefusal, webFetch} from './web-tls.js'
import {BrokerNotReadyError, NOT_READY_STATUSES, notReadyReason, untilReady} from './not-ready.js'
import type {PulsarTarget, Topic} from './url.js'

const TIMEOUT_MS = 30_000

export interface CursorStats {
  markDeletePosition?: string
  readPosition?: string
  individuallyDeletedMessages?: string
  messagesConsumedCounter?: number
}

export interface InternalStats {
  numberOfEntries?: number
  lastConfirmedEntry?: string
  currentLedgerEntries?: number
  ledgers?: Array<{ledgerId: number; entries: number}>
  cursors?: Record<string, CursorStats>
}

export interface SubscriptionStats {
  msgBacklog?: number
  /** Delivered and not acknowledged: tracked for Shared and Key_Shared subscriptions only. */
  unackedMessages?: number
  type?: string
  consumers?: Array<{consumerName?: string; unackedMessages?: number}>
}

export interface TopicStats {
  subscriptions?: Record<string, SubscriptionStats>
}

export class PulsarAdmin {
  constructor(
    private readonly target: PulsarTarget,
    private readonly displayUrl: string,
  ) {}

  /** The persistent topics of the URL's tenant/namespace, full names (`persistent://t/ns/name`). */
  async topics(): Promise<string[]> {
    const namespace = `${encodeURIComponent(this.target.tenant)}/${encodeURIComponent(this.target.namespace)}`
    return (await this.getJson<string[]>(`/admin/v2/persistent/${namespace}`, `list the topics of ${this.target.tenant}/${this.target.namespace}`)) ?? []
  }

  /** Internal stats, or undefined when the topic does not exist. */
  async internalStats(topic: Topic): Promise<InternalStats | undefined> {
    return this.getJson<InternalStats>(`/admin/v2/${topic.path}/internalStats`, `read the internal stats of ${topic.local}`)
  }

  /** Stats (with the precise backlog unless told otherwise), or undefined when the topic does not exist. */
  async stats(topic: Topic, preciseBacklog = true): Promise<TopicStats | undefined> {
    return this.getJson<TopicStats>(`/admin/v2/${topic.path}/stats?getPreciseBacklog=${String(preciseBacklog)}`, `read the stats of ${topic.local}`)
  }

  /** The topic's last message id, or undefined when the topic does not exist. */
  async lastMessageId(topic: Topic): Promise<{ledgerId: number; entryId: number; batchIndex?: number} | undefined> {
    return this.getJson(`/admin/v2/${topic.path}/lastMessageId`, `read the last message id of ${topic.local}`)
  }

  /** The topic's subscription names, undefined when the topic does not exist, 'forbidden' when the role may not list them. */
  async subscriptions(topic: Topic): Promise<string[] | undefined | 'forbidden'> {
    const what = `list the subscriptions of ${topic.local}`
    const response = await this.request(`/admin/v2/${topic.path}/subscriptions`, what)
    if (response.status === 404) return undefined
    if (response.status === 403) return 'forbidden'
    if (!response.ok) throw await this.failure(what, response)
    return (await response.json()) as string[]
  }

  /**
   * Creates a durable subscription at the latest position; false when it already existed. (No
   * message id in the body: any other position is a cursor reset after the create, which can fail.)
   */
  async createSubscription(topic: Topic, subscription: string): Promise<boolean> {
    const what = `create subscription ${subscription} on ${topic.local}`
    const response = await this.request(`/admin/v2/${topic.path}/subscription/${encodeURIComponent(subscription)}`, what, {method: 'PUT'})
    if (response.status === 409) return false
    if (!response.ok) throw await this.failure(what, response)
    return true
  }

  private async getJson<T>(path: string, what: string): Promise<T | undefined> {
    const response = await this.request(path, what)
    if (response.status === 404) return undefined
    if (!response.ok) throw await this.failure(what, response)
    try {
      return (await response.json()) as T
    } catch (error) {
      throw new BqError(`cannot ${what} on ${this.displayUrl}: the broker's answer is not JSON (${describeError(error)})`, {cause: error})
    }
  }

  /** --timeout's operation timeout, else 30 s. */
  private get timeoutMs(): number {
    return this.target.timeouts?.operationMs ?? TIMEOUT_MS
  }

  /**
   * One admin call (all of bq's are reads or an idempotent PUT). A not-ready answer (5xx, a
   * broker still loading the topic after a restart) is tried again within the operation timeout.
   */
  private async request(path: string, what: string, init: RequestInit = {}): Promise<Response> {
    return untilReady(
      () => this.requestOnce(path, what, init),
      (answer) => NOT_READY_STATUSES.has(answer.status),
      this.timeoutMs,
    )
  }

  private async requestOnce(path: string, what: string, init: RequestInit): Promise<Response> {
    const headers: Record<string, string> = {accept: 'application/json'}
    if (init.body !== undefined) headers['content-type'] = 'application/json'
    if (this.target.token !== undefined) headers.authorization = `Bearer ${this.target.token}`
    try {
      return await webFetch(this.target.adminBase + path, {...init, headers, signal: AbortSignal.timeout(this.timeoutMs)}, this.target.tls)
    } catch (error) {
      const handshake = tlsFailureReason(error, this.target.tls)
      if (handshake !== undefined) throw new ConnectionError(`cannot ${what}: the Pulsar admin API of ${this.displayUrl}: ${handshake}`, error, 'tls')
      const cause = (error as {cause?: {code?: string; message?: string}}).cause
      const reason = cause?.code === 'ECONNREFUSED' ? 'connection refused' : (error as Error).name === 'TimeoutError' ? `no answer within ${this.timeoutMs / 1000}s` : scrubSecrets(cause?.message ?? describeError(error), this.target.secrets)
      throw new ConnectionError(`cannot ${what}: the Pulsar admin API of ${this.displayUrl} is unreachable (${reason})`, error)
    }
  }

  private async failure(what: string, response: Response): Promise<BqError> {
    let reason = response.statusText
    try {
      const text = await response.text()
      const parsed = JSON.parse(text) as {reason?: unknown}
      reason = typeof parsed.reason === 'string' ? parsed.reason : text.slice(0, 200)
    } catch {
      // Keep the status text.
    }
    reason = scrubSecrets(reason.split('\n')[0], this.target.secrets)
    const refusal = pulsarRefusal(response.status, reason, what, this.displayUrl, this.target.token !== undefined)
    if (refusal !== undefined) return refusal
    if (NOT_READY_STATUSES.has(response.status)) return new BrokerNotReadyError(`cannot ${what} on ${this.displayUrl}: ${notReadyReason(response.status, this.timeoutMs)}: ${reason}`)
    return new BqError(`cannot ${what} on ${this.displayUrl}: HTTP ${response.status} ${reason}`)
  }
}
