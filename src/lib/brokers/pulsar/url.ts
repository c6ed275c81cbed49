/**
 * `pulsar://host:6650[?admin=http://host:8080][&token=…][&subscription=bq-redrive]…` (and
 * `pulsar+ssl://`) → where bq's Pulsar adapter connects. bq speaks Pulsar's WebSocket and admin
 * REST APIs, which both live on the broker's web port: `admin` names that endpoint; the binary
 * service URL's host only supplies its default. Unknown query parameters are refused, so a typo
 * cannot silently point bq at another subscription.
 */
import {UsageError} from '../../errors.js'
import type {Timeouts} from '../shared/timeouts.js'
import {TLS_PARAMS, type TlsSettings, parseTlsParams} from '../shared/tls.js'

export type SubscriptionType = 'Exclusive' | 'Shared'

export interface PulsarTarget {
  /** `http(s)://host:port` of the admin REST API, no trailing slash. */
  adminBase: string
  /** The same endpoint as `ws(s)://` for the WebSocket API. */
  wsBase: string
  /** Bearer token for both APIs, when configured (`?token=` or BQ_PULSAR_TOKEN). */
  token?: string
  /** The shared TLS options (ca, cert, key, servername, insecure) for an https:// admin (wss://) endpoint. */
  tls?: TlsSettings
  tenant: string
  namespace: string
  /** The durable subscription bq reads, drains and acknowledges through. */
  subscription: string
  subscriptionType: SubscriptionType
  /**
   * Created (at the latest position) before bq first publishes to a topic that has no
   * subscription at all, so what bq publishes is kept for consumers; empty = never.
   */
  ensureSubscription: string
  secrets: string[]
  /** Connect and request timeouts (--timeout); the registry sets them, absent in tests that build a target by hand. */
  timeouts?: Timeouts
}

export const DEFAULT_SUBSCRIPTION = 'bq-redrive'
/** The binding's default consumer subscription (spec-broker-bindings.md, Apache Pulsar). */
export const BINDING_SUBSCRIPTION = 'babelqueue'

const KNOWN_PARAMS = new Set(['admin', 'token', 'tenant', 'namespace', 'subscription', 'subscription_type', 'ensure_subscription', ...TLS_PARAMS])
const NAME = /^[A-Za-z0-9_.=:-]+$/

export function parsePulsarUrl(url: URL, displayUrl: string, env: NodeJS.ProcessEnv = process.env): PulsarTarget {
  const ssl = url.protocol === 'pulsar+ssl:'
  if (!ssl && url.protocol !== 'pulsar:') throw new UsageError(`${displayUrl} is not a pulsar:// or pulsar+ssl:// URL`)
  for (const key of url.searchParams.keys()) {
    if (!KNOWN_PARAMS.has(key)) throw new UsageError(`unknown parameter "${key}" in ${displayUrl}; known: ${[...KNOWN_PARAMS].join(', ')}`)
  }
  if (url.username !== '' || url.password !== '') throw new UsageError(`${displayUrl}: Pulsar takes a token (?token= or BQ_PULSAR_TOKEN), not user:password`)
  const host = url.hostname || '127.0.0.1'
  const adminText = url.searchParams.get('admin') ?? `${ssl ? 'https' : 'http'}://${host}:${ssl ? 8443 : 8080}`
  let admin: URL
  try {
    admin = new URL(adminText)
  } catch {
    throw new UsageError(`admin=${adminText} in ${displayUrl} is not a URL (expected http://host:8080)`)
  }
  if (admin.protocol !== 'http:' && admin.protocol !== 'https:') throw new UsageError(`admin= in ${displayUrl} must be an http:// or https:// URL`)
  const adminBase = `${admin.protocol}//${admin.host}${admin.pathname.replace(/\/+$/, '')}`
  const wsBase = adminBase.replace(/^http/, 'ws')
  const token = nonEmpty(url.searchParams.get('token')) ?? nonEmpty(env.BQ_PULSAR_TOKEN)
  const subscriptionType = url.searchParams.get('subscription_type') ?? 'Exclusive'
  if (subscriptionType !== 'Exclusive' && subscriptionType !== 'Shared') {
    throw new UsageError(`subscription_type in ${displayUrl} must be Exclusive or Shared, got "${subscriptionType}"`)
  }
  const target: PulsarTarget = {
    adminBase,
    wsBase,
    tenant: name(url, 'tenant', 'public', displayUrl),
    namespace: name(url, 'namespace', 'default', displayUrl),
    subscription: name(url, 'subscription', DEFAULT_SUBSCRIPTION, displayUrl),
    subscriptionType,
    ensureSubscription: url.searchParams.get('ensure_subscription') ?? BINDING_SUBSCRIPTION,
    secrets: token === undefined ? [] : [token, encodeURIComponent(token)],
  }
  if (target.ensureSubscription !== '' && !NAME.test(target.ensureSubscription)) throw new UsageError(`ensure_subscription in ${displayUrl} is not a valid subscription name`)
  if (token !== undefined) target.token = token
  // bq speaks to Pulsar only over its web port: TLS is that endpoint's (https:// admin, wss://).
  const tls = parseTlsParams(url.searchParams, displayUrl, {tls: admin.protocol === 'https:', host: admin.hostname.replace(/^\[(.*)\]$/, '$1'), tlsHint: 'pulsar+ssl:// or admin=https://HOST:PORT'})
  if (tls !== undefined) target.tls = tls
  return target
}

function name(url: URL, key: string, fallback: string, displayUrl: string): string {
  const value = url.searchParams.get(key) ?? fallback
  if (!NAME.test(value)) throw new UsageError(`${key} in ${displayUrl} must be a plain name (letters, digits, _ . = : -), got "${value}"`)
  return value
}

function nonEmpty(value: string | null | undefined): string | undefined {
  return value === null || value === undefined || value === '' ? undefined : value
}

/** A resolved topic: `persistent://tenant/namespace/local`. */
export interface Topic {
  /** The full name, for messages. */
  full: string
  /** `persistent/tenant/namespace/local` with the local name percent-encoded, for URL paths. */
  path: string
  /** The local name as bq shows it (`orders`). */
  local: string
}

/** A queue name → its topic: a plain name lives in the URL's tenant/namespace; a full `persistent://` name is used as given. */
export function topicOf(queue: string, target: Pick<PulsarTarget, 'tenant' | 'namespace'>, displayUrl: string): Topic {
  if (typeof queue !== 'string' || queue === '') throw new UsageError(`a queue name is required (broker ${displayUrl})`)
  const full = /^([a-z-]+):\/\/([^/]+)\/([^/]+)\/(.+)$/.exec(queue)
  if (full !== null) {
    if (full[1] !== 'persistent') throw new UsageError(`${queue}: bq reads and redrives persistent topics only (a non-persistent topic keeps no messages to browse or move)`)
    return {full: queue, path: `persistent/${full[2]}/${full[3]}/${encodeURIComponent(full[4])}`, local: full[4]}
  }
  if (queue.includes('/') || queue.includes('://')) throw new UsageError(`"${queue}" is neither a topic name nor persistent://tenant/namespace/topic`)
  return {full: `persistent://${target.tenant}/${target.namespace}/${queue}`, path: `persistent/${target.tenant}/${target.namespace}/${encodeURIComponent(queue)}`, local: queue}
}

/** A topic name a broker wrote (a DLQ's REAL_TOPIC) as bq would name it: short within the URL's namespace. */
export function queueOfTopic(topic: string, target: Pick<PulsarTarget, 'tenant' | 'namespace'>): string {
  const prefix = `persistent://${target.tenant}/${target.namespace}/`
  return topic.startsWith(prefix) ? topic.slice(prefix.length) : topic
}
