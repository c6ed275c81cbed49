/**
 * RabbitMQ's management HTTP API, for what AMQP 0-9-1 cannot do: list the queues of a vhost
 * (`bq dlq ls`). Where it is: `?management=http://host:15672` on the broker URL, else a guess of
 * `http://<broker host>:15672`; with the broker URL's credentials unless the management URL
 * carries its own. Also for the figures AMQP does not give: a queue's unacknowledged count
 * (`bq inflight ls`). The plugin must be enabled (`rabbitmq-plugins enable rabbitmq_management`).
 */
import {AuthError, BqError, describeError} from '../../errors.js'
import type {ListedQueue} from '../adapter.js'
import {scrubSecrets} from '../shared/redact.js'

/** The query parameter of the broker URL that names the management API. */
export const MANAGEMENT_PARAM = 'management'
const DEFAULT_PORT = 15672
const TIMEOUT_MS = 30_000

interface QueueInfo {
  name: string
  arguments?: Record<string, unknown>
  effective_policy_definition?: Record<string, unknown> | unknown[]
}

/** A queue's figures as the management API reports them (refreshed every few seconds, not live). */
export interface QueueStats {
  messages_ready?: number
  messages_unacknowledged?: number
  consumers?: number
}

/** What a call is for, so a failure says which AMQP gap the API was meant to fill. */
interface Purpose {
  /** `list queues`: completes "AMQP cannot …". */
  what: string
  code: string
  /** A refused user is exit 6 (AuthError `permission`) rather than a plain failure. */
  refusalIsAuth?: boolean
}

const LIST_QUEUES: Purpose = {what: 'list queues', code: 'cannot-list-queues'}
const COUNT_UNACKED: Purpose = {what: 'count unacknowledged messages', code: 'cannot-count-inflight', refusalIsAuth: true}

interface BindingInfo {
  destination: string
  destination_type: string
  routing_key: string
}

export class RabbitManagement {
  private readonly base: string
  private readonly authorization: string
  private readonly vhost: string
  private readonly secrets: string[]

  /** `brokerUrl` is the amqp:// URL (its credentials and vhost); `management` the parameter's value, if given. */
  constructor(brokerUrl: URL, management: string | undefined) {
    const api = new URL(management ?? `http://${brokerUrl.hostname}:${DEFAULT_PORT}`)
    const user = decodeURIComponent(api.username || brokerUrl.username || 'guest')
    const password = decodeURIComponent(api.password || brokerUrl.password || 'guest')
    api.username = ''
    api.password = ''
    this.base = api.href.replace(/\/+$/, '')
    this.authorization = `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`
    // amqp://host/ and amqp://host are the default vhost "/".
    const path = brokerUrl.pathname.replace(/^\//, '')
    this.vhost = path === '' ? '/' : decodeURIComponent(path)
    this.secrets = [password, encodeURIComponent(password)]
  }

  /** Where the API is, for messages (no credentials). */
  get where(): string {
    return this.base
  }

  /**
   * The vhost's queues. A queue is a native DLQ when another queue's dead-letter exchange
   * (x-dead-letter-exchange argument or dead-letter-exchange policy) routes to it: through the
   * default exchange by the dead-letter routing key, or through a named exchange by a binding
   * whose key is that key, the source queue's name, empty or `#`.
   */
  async queues(): Promise<ListedQueue[]> {
    const vhost = encodeURIComponent(this.vhost)
    const queues = await this.get<QueueInfo[]>(`/api/queues/${vhost}?columns=name,arguments,effective_policy_definition`)
    const sources = new Map<string, string[]>()
    const bindings = new Map<string, BindingInfo[]>()
    for (const queue of queues) {
      const policy = Array.isArray(queue.effective_policy_definition) ? {} : (queue.effective_policy_definition ?? {})
      const exchange = queue.arguments?.['x-dead-letter-exchange'] ?? policy['dead-letter-exchange']
      if (typeof exchange !== 'string') continue
      const explicitKey = queue.arguments?.['x-dead-letter-routing-key'] ?? policy['dead-letter-routing-key']
      const key = typeof explicitKey === 'string' ? explicitKey : queue.name
      let targets: string[]
      if (exchange === '') {
        targets = [key]
      } else {
        if (!bindings.has(exchange)) bindings.set(exchange, await this.get<BindingInfo[]>(`/api/exchanges/${vhost}/${encodeURIComponent(exchange)}/bindings/source`).catch(() => []))
        targets = (bindings.get(exchange) ?? []).filter((b) => b.destination_type === 'queue' && [key, '', '#'].includes(b.routing_key)).map((b) => b.destination)
      }
      for (const target of targets) sources.set(target, [...(sources.get(target) ?? []), queue.name])
    }
    return queues
      .map((queue) => queue.name)
      .sort()
      .map((name) => {
        const from = sources.get(name)
        return from === undefined ? {queue: name} : {queue: name, nativeDeadLetterFor: [...new Set(from)].sort()}
      })
  }

  /** One queue's figures; undefined when the vhost has no such queue (HTTP 404). */
  async queueStats(queue: string): Promise<QueueStats | undefined> {
    const columns = 'messages_ready,messages_unacknowledged,consumers'
    return this.get<QueueStats>(`/api/queues/${encodeURIComponent(this.vhost)}/${encodeURIComponent(queue)}?columns=${columns}`, COUNT_UNACKED, true)
  }

  private async get<T>(path: string, purpose?: Purpose): Promise<T>
  private async get<T>(path: string, purpose: Purpose, missingIsUndefined: true): Promise<T | undefined>
  private async get<T>(path: string, purpose: Purpose = LIST_QUEUES, missingIsUndefined = false): Promise<T | undefined> {
    const {what, code} = purpose
    const advice = `enable it (rabbitmq-plugins enable rabbitmq_management) or name it with ?${MANAGEMENT_PARAM}=http://host:15672 on the broker URL`
    let response: Response
    try {
      response = await fetch(this.base + path, {headers: {authorization: this.authorization, accept: 'application/json'}, signal: AbortSignal.timeout(TIMEOUT_MS)})
    } catch (error) {
      const cause = (error as {cause?: {code?: string; message?: string}}).cause
      const reason = cause?.code === 'ECONNREFUSED' ? 'connection refused' : (error as Error).name === 'TimeoutError' ? `no answer within ${TIMEOUT_MS / 1000} s` : scrubSecrets(cause?.message ?? describeError(error), this.secrets)
      throw new BqError(`AMQP cannot ${what}, and the RabbitMQ management API at ${this.base} did not answer (${reason}): ${advice}`, {code, cause: error})
    }
    if (response.status === 401 || response.status === 403) {
      const message = `AMQP cannot ${what}, and the RabbitMQ management API at ${this.base} refused the credentials (HTTP ${response.status}): the user needs the "monitoring" or "management" tag, or put other credentials in ?${MANAGEMENT_PARAM}=`
      throw purpose.refusalIsAuth ? new AuthError(message, 'permission') : new BqError(message, {code})
    }
    if (response.status === 404 && missingIsUndefined) return undefined
    if (!response.ok) throw new BqError(`the RabbitMQ management API at ${this.base} answered HTTP ${response.status} to GET ${path.split('?')[0]}`, {code})
    try {
      return (await response.json()) as T
    } catch (error) {
      throw new BqError(`the RabbitMQ management API at ${this.base} did not answer JSON (is it the management port?): ${advice}`, {code, cause: error})
    }
  }
}
