/**
 * kafkajs failures → bq's one-line errors. A broker that cannot be reached is a ConnectionError
 * (exit 4; code `tls` for a failed handshake); refused credentials or a missing ACL is an
 * AuthError (exit 6); the broker answering "no" otherwise is a BqError naming the Kafka error
 * type. Messages carry the redacted URL only, and are scrubbed of secrets.
 */
import {AuthError, BqError, ConnectionError, describeError} from '../../../errors.js'
import {scrubSecrets} from '../../shared/redact.js'
import {tlsConnectionError} from '../../shared/tls.js'
import type {KafkaTarget} from '../url.js'

interface KafkaJsErrorLike {
  name?: string
  type?: string
  code?: string | number
  message?: string
  cause?: unknown
  /** KafkaJSAggregateError: one error per topic or partition. */
  errors?: unknown[]
}

const CONNECTION_NAMES = new Set([
  'KafkaJSConnectionError',
  'KafkaJSConnectionClosedError',
  'KafkaJSRequestTimeoutError',
  'KafkaJSBrokerNotFound',
  'KafkaJSNoBrokerAvailableError',
  'KafkaJSLockTimeout',
])
const AUTH_TYPES = new Set(['SASL_AUTHENTICATION_FAILED', 'ILLEGAL_SASL_STATE', 'UNSUPPORTED_SASL_MECHANISM'])

/** Kafka's ACL refusals, and the kind of resource each one is about. */
const AUTHORIZATION_TYPES = new Map([
  ['TOPIC_AUTHORIZATION_FAILED', 'topic'],
  ['GROUP_AUTHORIZATION_FAILED', 'group'],
  ['CLUSTER_AUTHORIZATION_FAILED', 'cluster'],
  ['TRANSACTIONAL_ID_AUTHORIZATION_FAILED', 'transactional id'],
])

/**
 * The ACL operation bq's requests need, by what bq was doing (the `what` of kafkaFailure) and
 * the kind of resource refused; the first match wins. The ACL table in docs/production-brokers.md follows it.
 */
const NEEDED_OPERATIONS: Array<{what: RegExp; topic: string; group?: string}> = [
  {what: /^publish to topic /, topic: 'Write'},
  {what: /^create topic /, topic: 'Create'},
  {what: /^read topic /, topic: 'Read'},
  {what: /^commit the offsets of consumer group /, topic: 'Read', group: 'Read'},
  {what: /^read the offsets of consumer group /, topic: 'Describe', group: 'Describe'},
  {what: /./, topic: 'Describe'},
]

/** The innermost kafkajs error (retry wrappers keep the real one as `cause`; aggregates list theirs). */
export function rootCause(error: unknown): KafkaJsErrorLike {
  let current = error as KafkaJsErrorLike | undefined
  for (let depth = 0; depth < 5 && current !== undefined && current !== null && current.name !== 'BqError'; depth++) {
    const inner = current.cause ?? (Array.isArray(current.errors) ? current.errors[0] : undefined)
    if (inner === undefined || inner === null) break
    current = inner as KafkaJsErrorLike
  }
  return current ?? {}
}

/** The Kafka protocol error type (`UNKNOWN_TOPIC_OR_PARTITION`, …) of a failure, if it is one. */
export function kafkaErrorType(error: unknown): string | undefined {
  const own = (error as KafkaJsErrorLike | undefined)?.type
  return own ?? rootCause(error).type
}

export function isConnectionFailure(error: unknown): boolean {
  for (const candidate of [error as KafkaJsErrorLike | undefined, rootCause(error)]) {
    if (candidate === undefined) continue
    if (CONNECTION_NAMES.has(candidate.name ?? '')) return true
    if (typeof candidate.code === 'string' && /^E[A-Z]+$/.test(candidate.code)) return true
    // kafkajs's plain Error when a request is sent on a connection its handshake never finished (a hung broker).
    if (/^(Broker )?not connected$/i.test(candidate.message ?? '')) return true
  }
  return false
}

/** Why a connection failed, in a few words. */
export function connectionReason(error: unknown, secrets: string[]): string {
  const root = rootCause(error)
  const text = `${describeError(error)} ${root.message ?? ''}`
  if (root.name === 'KafkaJSSASLAuthenticationError' || AUTH_TYPES.has(root.type ?? '') || /SASL|authenticat/i.test(text)) {
    return `authentication failed (${scrubSecrets(root.message ?? describeError(error), secrets)})`
  }
  if (/ECONNREFUSED/.test(text)) return 'connection refused'
  if (/ENOTFOUND|EAI_AGAIN/.test(text)) return 'host not found'
  if (/ETIMEDOUT|timeout|timed out/i.test(text)) return 'timed out'
  if (/ECONNRESET|EPIPE|closed/i.test(text)) return `the connection was closed (${scrubSecrets(root.message ?? '', secrets)})`
  return scrubSecrets(root.message ?? describeError(error), secrets)
}

/** The broker refused the SASL exchange (a wrong user or password, a mechanism it does not offer). */
export function isAuthFailure(error: unknown): boolean {
  return [error as KafkaJsErrorLike | undefined, rootCause(error)].some((candidate) => candidate?.name === 'KafkaJSSASLAuthenticationError' || AUTH_TYPES.has(candidate?.type ?? ''))
}

/**
 * A missing ACL, as one line naming the resource and the operation bq needed; undefined when
 * `error` is not an authorization failure.
 */
export function permissionFailure(what: string, error: unknown, displayUrl: string): AuthError | undefined {
  const type = kafkaErrorType(error)
  const kind = type === undefined ? undefined : AUTHORIZATION_TYPES.get(type)
  if (kind === undefined) return undefined
  const needed = NEEDED_OPERATIONS.find((entry) => entry.what.test(what))
  const named = kind === 'group' ? /consumer group (\S+)/.exec(what)?.[1] : kind === 'topic' ? /topic (\S+)/.exec(what)?.[1] : undefined
  const operation = kind === 'group' ? needed?.group : kind === 'topic' ? needed?.topic : undefined
  const resource = named === undefined ? `the ${kind}` : `${kind} ${named}`
  const acl = operation === undefined ? `an ACL on ${resource}` : `the ACL ${operation} on ${resource}`
  return new AuthError(`cannot ${what} on ${displayUrl}: not authorized (${type}): the user needs ${acl}`, 'permission', error)
}

/** How an operator names a mechanism (`SCRAM-SHA-512`). */
function mechanismName(target: KafkaTarget): string {
  return (target.sasl?.mechanism ?? 'none').toUpperCase()
}

/**
 * The first connection failed: the reason in one line, with the option that likely fixes it. A
 * broker that wants SASL or TLS and is reached without it just closes the connection during the
 * first request (or the handshake), which alone says nothing; here bq knows what the URL lacked.
 */
export function connectFailure(error: unknown, displayUrl: string, target: KafkaTarget): BqError {
  if (error instanceof BqError) return error
  const tls = tlsConnectionError(error, displayUrl, target.tls)
  if (tls !== undefined) return tls
  if (isAuthFailure(error)) {
    const who = target.sasl === undefined ? 'the client' : `user ${target.sasl.username} (${mechanismName(target)})`
    const detail = scrubSecrets(rootCause(error).message ?? describeError(error), target.secrets)
    return new AuthError(`cannot connect to ${displayUrl}: the broker refused the credentials of ${who}: check the user name, the password and the mechanism (${detail})`, 'auth', error)
  }
  const permission = permissionFailure('read the cluster metadata', error, displayUrl)
  if (permission !== undefined) return permission
  const hint = closedConnectionHint(error, target)
  return new ConnectionError(`cannot connect to ${displayUrl}: ${hint ?? connectionReason(error, target.secrets)}`, error)
}

/** What the URL likely lacks when the broker hangs up on the first request or the TLS handshake. */
function closedConnectionHint(error: unknown, target: KafkaTarget): string | undefined {
  const text = `${describeError(error)} ${rootCause(error).message ?? ''}`
  if (target.tls !== undefined && /before secure TLS connection was established/i.test(text)) {
    return 'the broker closed the connection during the TLS handshake: is this a plaintext port? (then drop ssl=true and the TLS options)'
  }
  if (!/ECONNRESET|EPIPE|closed connection|connection was closed|socket hang up/i.test(text)) return undefined
  const sasl = 'add sasl=scram-sha-512 (or plain, scram-sha-256) and the credentials, as kafka://user:password@host or in BQ_KAFKA_USERNAME and BQ_KAFKA_PASSWORD'
  const tls = 'add ssl=true, and ca=PATH for a private CA'
  const closed = 'the broker closed the connection during the first request'
  if (target.sasl === undefined && target.tls === undefined) return `${closed}: it may want TLS (${tls}) or SASL (${sasl})`
  if (target.sasl === undefined) return `${closed}: it likely wants SASL authentication: ${sasl}`
  if (target.tls === undefined) return `${closed}: it likely wants TLS: ${tls}`
  return undefined
}

/** One-line, redacted error for a failed Kafka operation. */
export function kafkaFailure(what: string, error: unknown, displayUrl: string, secrets: string[]): Error {
  if (error instanceof BqError) return error
  if (isAuthFailure(error)) {
    return new AuthError(`cannot ${what} on ${displayUrl}: the broker refused the credentials (${scrubSecrets(rootCause(error).message ?? describeError(error), secrets)})`, 'auth', error)
  }
  const permission = permissionFailure(what, error, displayUrl)
  if (permission !== undefined) return permission
  if (isConnectionFailure(error)) return new ConnectionError(`cannot ${what}: lost or could not reach ${displayUrl}: ${connectionReason(error, secrets)}`, error)
  const type = kafkaErrorType(error)
  const message = scrubSecrets(rootCause(error).message ?? describeError(error), secrets)
  return new BqError(`cannot ${what} on ${displayUrl}: ${type === undefined ? '' : `${type}: `}${message}`, {cause: error})
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
