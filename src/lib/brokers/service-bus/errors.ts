/** Service Bus SDK failures as one-line bq errors; unreachable namespaces exit 4, refused credentials 6. */
import {AuthError, BqError, ConnectionError, QueueNotFoundError, describeError} from '../../errors.js'
import {scrubSecrets} from '../shared/redact.js'

const CONNECTION_CODES = new Set(['ServiceCommunicationProblem', 'UnauthorizedAccess', 'ServiceTimeout', 'ServiceBusy'])
// The SDK reports a connection cut mid-receive as "Unknown error occurred on the AMQP connection".
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH'])

/** The SDK's error code (ServiceBusError.code) or the socket error code. */
export function serviceBusCode(thrown: unknown): string | undefined {
  const error = innermost(thrown)
  const code = (error as {code?: unknown} | undefined)?.code
  return typeof code === 'string' ? code : undefined
}

export function isEntityNotFound(error: unknown): boolean {
  return serviceBusCode(error) === 'MessagingEntityNotFound'
}

export function isLockLost(error: unknown): boolean {
  const code = serviceBusCode(error)
  return code === 'MessageLockLost' || code === 'SessionLockLost'
}

/** The SDK's retries wrap each attempt's error in an AggregateError; the last attempt's says why. */
function innermost(error: unknown): unknown {
  if (error instanceof AggregateError && error.errors.length > 0) return innermost(error.errors[error.errors.length - 1])
  return error
}

export function wrapServiceBusError(action: string, displayUrl: string, thrown: unknown, secrets: string[]): BqError {
  if (thrown instanceof BqError) return thrown
  const error = innermost(thrown)
  const code = serviceBusCode(error)
  const reason = scrubSecrets(describeError(error), secrets)
  // A wrong key or SAS token, or one without the claim (Send, Listen, Manage) the action needs: not worth a retry.
  if (code === 'UnauthorizedAccess') return new AuthError(`Service Bus at ${displayUrl} refused the credentials (could not ${action}): ${reason}`, /claim|Listen|Send|Manage/i.test(reason) ? 'permission' : 'auth', error)
  if ((code !== undefined && (CONNECTION_CODES.has(code) || SOCKET_CODES.has(code))) || /ECONNREFUSED|ENOTFOUND|getaddrinfo|socket|connection.*(closed|lost|refused)|error occurred on the AMQP connection/i.test(reason)) {
    return new ConnectionError(`cannot reach Service Bus at ${displayUrl} (could not ${action}): ${reason}`, error)
  }
  if (code === 'MessagingEntityNotFound') {
    return new QueueNotFoundError(`cannot ${action} on ${displayUrl}: the entity does not exist (Service Bus entities must be created first; bq does not create them)`, error)
  }
  return new BqError(`Service Bus could not ${action} on ${displayUrl}: ${reason}`, {cause: error})
}
