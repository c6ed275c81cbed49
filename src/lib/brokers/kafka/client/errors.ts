/**
 * kafkajs failures → bq's one-line errors. A broker that cannot be reached or refuses the
 * credentials is a ConnectionError (exit 4); the broker answering "no" is a BqError naming
 * the Kafka error type. Messages carry the redacted URL only, and are scrubbed of secrets.
 */
import {BqError, ConnectionError, describeError} from '../../../errors.js'
import {scrubSecrets} from '../../shared/redact.js'

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
  'KafkaJSSASLAuthenticationError',
  'KafkaJSLockTimeout',
])
const AUTH_TYPES = new Set(['SASL_AUTHENTICATION_FAILED', 'ILLEGAL_SASL_STATE', 'UNSUPPORTED_SASL_MECHANISM'])

/** Broker answers that a short wait and a fresh look at the cluster usually fix. */
export const TRANSIENT_TYPES = new Set([
  'LEADER_NOT_AVAILABLE',
  'NOT_LEADER_FOR_PARTITION',
  'NOT_COORDINATOR_FOR_GROUP',
  'GROUP_COORDINATOR_NOT_AVAILABLE',
  'GROUP_LOAD_IN_PROGRESS',
  'REQUEST_TIMED_OUT',
  'FENCED_LEADER_EPOCH',
  'UNKNOWN_LEADER_EPOCH',
])

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
    if (AUTH_TYPES.has(candidate.type ?? '')) return true
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

/** One-line, redacted error for a failed Kafka operation. */
export function kafkaFailure(what: string, error: unknown, displayUrl: string, secrets: string[]): Error {
  if (error instanceof BqError) return error
  if (isConnectionFailure(error)) return new ConnectionError(`cannot ${what}: lost or could not reach ${displayUrl}: ${connectionReason(error, secrets)}`, error)
  const type = kafkaErrorType(error)
  const message = scrubSecrets(rootCause(error).message ?? describeError(error), secrets)
  return new BqError(`cannot ${what} on ${displayUrl}: ${type === undefined ? '' : `${type}: `}${message}`, {cause: error})
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
