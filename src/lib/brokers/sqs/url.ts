/**
 * `sqs://<region>[?endpoint=http://host:port][&account=…][&group=…][&visibility=…][&profile=…]`.
 *
 * Credentials never go in the URL: the SDK's default chain finds them (environment, shared
 * config/credentials files and `profile`, SSO, container and instance roles), so a URL can be
 * printed, logged and shared as it is.
 */
import {UsageError} from '../../errors.js'
import type {Timeouts} from '../shared/timeouts.js'
import {TLS_PARAMS, type TlsSettings, parseTlsParams} from '../shared/tls.js'

export interface SqsTarget {
  /** Empty: the SDK resolves the region itself (AWS_REGION, the profile). */
  region: string
  /** An SQS-compatible endpoint (ElasticMQ, LocalStack); AWS's own when absent. */
  endpoint?: string
  /** The account that owns the queues (GetQueueUrl's QueueOwnerAWSAccountId), for cross-account access. */
  account?: string
  /** FIFO MessageGroupId for everything bq publishes; the queue name when absent (the binding's default). */
  group?: string
  /** Seconds a receive hides a message from other consumers; bq extends it while it holds the message. */
  visibilitySeconds: number
  /** The shared TLS options (ca, cert, key, servername, insecure) for an https:// endpoint. */
  tls?: TlsSettings
  /** A named profile from the shared AWS config files. */
  profile?: string
  /** Connect and request timeouts (--timeout); the registry sets them, absent in tests that build a target by hand. */
  timeouts?: Timeouts
}

/**
 * 30 s (SQS's own default): long enough that a busy run keeps its reservations with a heartbeat
 * at half that, short enough that messages a crashed run held come back within half a minute.
 */
export const DEFAULT_VISIBILITY_SECONDS = 30
/** SQS's maximum visibility timeout (12 hours). */
const MAX_VISIBILITY_SECONDS = 43_200

const KNOWN = new Set(['endpoint', 'account', 'group', 'visibility', 'profile', ...TLS_PARAMS])

export function parseSqsUrl(url: URL, displayUrl: string): SqsTarget {
  if (url.username !== '' || url.password !== '') {
    throw new UsageError(`${displayUrl}: bq does not take AWS credentials in an sqs:// URL; use the environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_PROFILE) or ?profile=NAME`)
  }
  if (url.port !== '' || (url.pathname !== '' && url.pathname !== '/')) {
    throw new UsageError(`${displayUrl}: expected sqs://<region>[?endpoint=…], with no port or path (queue names are given to each command)`)
  }
  const region = decodeURIComponent(url.hostname).toLowerCase()
  if (region !== '' && !/^[a-z]{2,}(-[a-z0-9]+)+$/.test(region)) {
    throw new UsageError(`${displayUrl}: "${region}" is not an AWS region name (such as us-east-1)`)
  }
  const params = url.searchParams
  for (const key of params.keys()) {
    if (!KNOWN.has(key)) throw new UsageError(`${displayUrl}: unknown parameter "${key}" (known: ${[...KNOWN].join(', ')})`)
  }
  const target: SqsTarget = {region, visibilitySeconds: DEFAULT_VISIBILITY_SECONDS}
  const endpoint = single(params, 'endpoint', displayUrl)
  if (endpoint !== undefined) {
    let parsed: URL
    try {
      parsed = new URL(endpoint)
    } catch {
      throw new UsageError(`${displayUrl}: endpoint "${endpoint}" is not a URL (expected http://host:port or https://host)`)
    }
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new UsageError(`${displayUrl}: endpoint must be an http:// or https:// URL`)
    if (parsed.username !== '' || parsed.password !== '') throw new UsageError(`${displayUrl}: the endpoint URL must not carry credentials`)
    target.endpoint = parsed.origin + (parsed.pathname === '/' ? '' : parsed.pathname)
  }
  // TLS options are for an endpoint bq is told about (a proxy, LocalStack behind TLS); AWS's own endpoints need none.
  const endpointUrl = target.endpoint === undefined ? undefined : new URL(target.endpoint)
  const tls = parseTlsParams(params, displayUrl, {tls: endpointUrl?.protocol === 'https:', host: endpointUrl?.hostname.replace(/^\[(.*)\]$/, '$1') ?? '', tlsHint: 'endpoint=https://HOST'})
  if (tls !== undefined) target.tls = tls
  const account = single(params, 'account', displayUrl)
  if (account !== undefined) {
    if (!/^\d{12}$/.test(account)) throw new UsageError(`${displayUrl}: account must be a 12-digit AWS account id`)
    target.account = account
  }
  const group = single(params, 'group', displayUrl)
  if (group !== undefined) {
    // SQS's rule for MessageGroupId: 1–128 characters, alphanumerics and punctuation.
    if (!/^[\x21-\x7e]{1,128}$/.test(group)) throw new UsageError(`${displayUrl}: group must be 1–128 letters, digits or punctuation (an SQS MessageGroupId)`)
    target.group = group
  }
  const visibility = single(params, 'visibility', displayUrl)
  if (visibility !== undefined) {
    const seconds = Number(visibility)
    if (!/^\d+$/.test(visibility) || seconds < 2 || seconds > MAX_VISIBILITY_SECONDS) {
      throw new UsageError(`${displayUrl}: visibility must be a whole number of seconds from 2 to ${MAX_VISIBILITY_SECONDS}`)
    }
    target.visibilitySeconds = seconds
  }
  const profile = single(params, 'profile', displayUrl)
  if (profile !== undefined) target.profile = profile
  return target
}

function single(params: URLSearchParams, key: string, displayUrl: string): string | undefined {
  const values = params.getAll(key)
  if (values.length === 0) return undefined
  if (values.length > 1) throw new UsageError(`${displayUrl}: parameter "${key}" is given more than once`)
  if (values[0] === '') throw new UsageError(`${displayUrl}: parameter "${key}" is empty`)
  return values[0]
}

/**
 * SQS queue names: 1–80 letters, digits, `-` and `_`, FIFO queues ending in `.fifo` (the suffix
 * counts toward the 80). No dots otherwise, so the BabelQueue convention `<queue>.dlq` cannot name
 * an SQS queue: the error says how to name the dead-letter queue instead.
 */
export function checkSqsQueueName(queue: string, displayUrl: string): void {
  if (typeof queue !== 'string' || queue === '') throw new UsageError(`a queue name is required (broker ${displayUrl})`)
  const base = queue.endsWith('.fifo') ? queue.slice(0, -5) : queue
  if (queue.length <= 80 && /^[A-Za-z0-9_-]+$/.test(base)) return
  if (queue.length > 80) throw new UsageError(`"${queue.slice(0, 40)}…" is not an SQS queue name: at most 80 characters`)
  const hint = queue.endsWith('.dlq') ? `; SQS has no dots in queue names, so name the dead-letter queue explicitly, e.g. --dlq ${queue.slice(0, -4).replace(/\.fifo$/, '')}-dlq` : ''
  throw new UsageError(`"${queue}" is not an SQS queue name: only letters, digits, "-" and "_" (and a ".fifo" suffix for FIFO queues)${hint}`)
}

export function isFifoQueue(queue: string): boolean {
  return queue.endsWith('.fifo')
}
