/**
 * The SQS client bq uses, how its failures become bq errors, and the queue directory (name →
 * queue URL and the attributes publishing needs, looked up once per run).
 */
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  SQSClient,
  type QueueAttributeName,
  type SQSClientConfig,
} from '@aws-sdk/client-sqs'

import {AuthError, BqError, ConnectionError, QueueNotFoundError, UsageError, describeError} from '../../errors.js'
import {tlsFailureReason} from '../shared/tls.js'
import {isFifoQueue, type SqsTarget} from './url.js'

/**
 * bq pins the SDK (DESIGN.md), so the SDK's notice that its future releases will need Node 22
 * says nothing the operator can act on; it would print on every run. An explicit setting wins.
 */
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'

/** A dead endpoint is reported within seconds: 2 s to connect, 3 attempts (the SDK's backoff is ~100 ms). */
const CONNECT_TIMEOUT_MS = 2000
const MAX_ATTEMPTS = 3
/** Above the longest wait a receive asks for (1 s), with room for a slow answer. */
const REQUEST_TIMEOUT_MS = 30_000
/** The longest a receive waits for messages (drain.ts asks for 1 s at most). */
export const RECEIVE_WAIT_MS = 1000
/** Concurrent requests per client: the batch fan-out of publish, drain and heartbeat. */
const MAX_SOCKETS = 32

export function createSqsClient(target: SqsTarget): SQSClient {
  const config: SQSClientConfig = {
    maxAttempts: MAX_ATTEMPTS,
    requestHandler: {
      connectionTimeout: Math.min(CONNECT_TIMEOUT_MS, target.timeouts?.connectMs ?? CONNECT_TIMEOUT_MS),
      // A receive's 1 s long poll rides on top of the operation timeout.
      requestTimeout: target.timeouts === undefined ? REQUEST_TIMEOUT_MS : target.timeouts.operationMs + RECEIVE_WAIT_MS,
      throwOnRequestTimeout: true,
      httpAgent: {keepAlive: true, maxSockets: MAX_SOCKETS},
      httpsAgent: {keepAlive: true, maxSockets: MAX_SOCKETS, ...target.tls?.options},
    },
  }
  if (target.region !== '') config.region = target.region
  if (target.endpoint !== undefined) config.endpoint = target.endpoint
  if (target.profile !== undefined) config.profile = target.profile
  return new SQSClient(config)
}

/** What an SDK error carries that bq looks at. */
interface SdkError {
  name?: string
  code?: string
  message?: string
  $fault?: string
  $metadata?: {httpStatusCode?: number}
}

/** SQS's answers for credentials it does not accept (exit 6 'auth'); the rest of AUTH_ERRORS are permissions. */
const CREDENTIAL_ERRORS = new Set(['InvalidClientTokenId', 'SignatureDoesNotMatch', 'UnrecognizedClientException', 'ExpiredToken', 'ExpiredTokenException', 'InvalidSecurity', 'MissingAuthenticationToken', 'IncompleteSignature'])
const AUTH_ERRORS = new Set([
  'InvalidClientTokenId',
  'SignatureDoesNotMatch',
  'AccessDenied',
  'AccessDeniedException',
  'UnrecognizedClientException',
  'ExpiredToken',
  'ExpiredTokenException',
  'InvalidSecurity',
  'MissingAuthenticationToken',
  'IncompleteSignature',
  'KmsAccessDenied',
])
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'ECONNRESET', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNABORTED'])

export function isQueueMissing(error: unknown): boolean {
  const name = (error as SdkError | undefined)?.name
  return name === 'QueueDoesNotExist' || name === 'AWS.SimpleQueueService.NonExistentQueue'
}

/**
 * One line, no stack, the right exit code: unreachable endpoints are ConnectionErrors (exit 4);
 * missing or refused credentials and permissions are AuthErrors (exit 6); a request SQS rejected
 * is a BqError naming SQS's reason.
 */
export function sqsError(what: string, error: unknown, where: string): BqError {
  if (error instanceof BqError) return error
  const e = (error ?? {}) as SdkError
  const name = e.name ?? ''
  const message = describeError(error)
  if (name === 'CredentialsProviderError') {
    // No credential found is not worth a retry: the same command finds none again (exit 6, not 4).
    return new AuthError(`no AWS credentials for ${where} (could not ${what}): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE or ?profile=, or run where a role is available`, 'auth', error)
  }
  if (/region is missing/i.test(message)) {
    return new UsageError(`no AWS region for ${where}: name it in the URL (sqs://us-east-1) or set AWS_REGION`)
  }
  if (AUTH_ERRORS.has(name)) {
    if (CREDENTIAL_ERRORS.has(name)) return new AuthError(`${where} refused the AWS credentials (could not ${what}): ${name}: ${message}`, 'auth', error)
    return new AuthError(`${where} refused permission to ${what} (${name}: ${message}); the IAM policy of these credentials must allow it`, 'permission', error)
  }
  const handshake = tlsFailureReason(error)
  if (handshake !== undefined) return new ConnectionError(`cannot reach ${where} (could not ${what}): ${handshake}`, error, 'tls')
  if ((e.code !== undefined && NETWORK_CODES.has(e.code)) || name === 'TimeoutError' || name === 'RequestTimeout' || name === 'AbortError') {
    return new ConnectionError(`cannot reach ${where} (could not ${what}): ${networkReason(e.code, message)}`, error)
  }
  const status = e.$metadata?.httpStatusCode
  if ((name === 'Unknown' || name === 'UnknownError' || message === 'UnknownError') && status !== undefined) {
    return new ConnectionError(`${where} did not answer as SQS (HTTP ${status}) when bq tried to ${what}`, error)
  }
  if (status === undefined && e.$fault === undefined) {
    // Not an answer from SQS at all (a client-side failure such as a checksum mismatch).
    return new BqError(`could not ${what} on ${where}: ${message}`, {cause: error})
  }
  return new BqError(`SQS refused to ${what} on ${where}: ${name ? `${name}: ` : ''}${message}`, {cause: error})
}

function networkReason(code: string | undefined, message: string): string {
  if (code === 'ECONNREFUSED') return 'connection refused'
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found'
  if (code === 'ETIMEDOUT') return 'timed out'
  return message
}

/** What publishing needs to know about a queue. */
export interface QueueFacts {
  url: string
  fifo: boolean
  /** FIFO queues only: SQS derives deduplication ids from the body when none is given. */
  contentDedup: boolean
  /** The queue's MaximumMessageSize (bytes). */
  maxMessageBytes: number
}

/** SQS's largest message (1 MiB since 2025); queues created before keep 256 KiB unless raised. */
export const SQS_MAX_MESSAGE_BYTES = 1_048_576

/** Queue name → URL (and facts), looked up once per run. */
export class SqsQueues {
  private readonly urls = new Map<string, string>()
  private readonly facts = new Map<string, QueueFacts>()

  constructor(
    private readonly client: SQSClient,
    private readonly target: SqsTarget,
    private readonly where: string,
  ) {}

  /** The URL of every queue of the account, all pages of ListQueues. */
  async list(): Promise<string[]> {
    const urls: string[] = []
    let token: string | undefined
    try {
      do {
        const page = await this.client.send(new ListQueuesCommand({MaxResults: 1000, NextToken: token}))
        urls.push(...(page.QueueUrls ?? []))
        token = page.NextToken
      } while (token !== undefined && token !== '')
    } catch (error) {
      throw sqsError('list the queues', error, this.where)
    }
    return urls
  }

  /** The queue's URL, or undefined when it does not exist. */
  async find(queue: string): Promise<string | undefined> {
    const known = this.urls.get(queue)
    if (known !== undefined) return known
    try {
      const result = await this.client.send(new GetQueueUrlCommand({QueueName: queue, QueueOwnerAWSAccountId: this.target.account}))
      if (result.QueueUrl === undefined) throw new BqError(`SQS returned no URL for queue "${queue}"`)
      this.urls.set(queue, result.QueueUrl)
      return result.QueueUrl
    } catch (error) {
      if (isQueueMissing(error)) return undefined
      throw sqsError(`find queue "${queue}"`, error, this.where)
    }
  }

  /** The queue's URL, creating the queue when it is missing (FIFO for a `.fifo` name). */
  async ensure(queue: string): Promise<string> {
    const found = await this.find(queue)
    if (found !== undefined) return found
    if (this.target.account !== undefined) {
      throw new QueueNotFoundError(`queue "${queue}" does not exist in account ${this.target.account} on ${this.where}; bq creates missing queues only in the caller's own account`)
    }
    // Content-based deduplication stays off: bq deduplicates by meta.id (the binding), and a
    // redrive must be able to send a body identical to one sent minutes before.
    const attributes: Partial<Record<QueueAttributeName, string>> = isFifoQueue(queue) ? {FifoQueue: 'true', ContentBasedDeduplication: 'false'} : {}
    try {
      const result = await this.client.send(new CreateQueueCommand({QueueName: queue, Attributes: attributes}))
      if (result.QueueUrl === undefined) throw new BqError(`SQS returned no URL for the new queue "${queue}"`)
      this.urls.set(queue, result.QueueUrl)
      return result.QueueUrl
    } catch (error) {
      // Created by someone else meanwhile, with other attributes: use theirs.
      if ((error as SdkError | undefined)?.name === 'QueueNameExists') {
        const url = await this.find(queue)
        if (url !== undefined) return url
      }
      throw sqsError(`create queue "${queue}"`, error, this.where)
    }
  }

  /** The facts of an existing queue (by its URL from find/ensure). */
  async factsOf(queue: string, url: string): Promise<QueueFacts> {
    const known = this.facts.get(queue)
    if (known !== undefined && known.url === url) return known
    const attributes = await this.attributes(queue, url, ['FifoQueue', 'ContentBasedDeduplication', 'MaximumMessageSize'])
    const size = Number(attributes.MaximumMessageSize)
    const facts: QueueFacts = {
      url,
      fifo: attributes.FifoQueue === 'true' || isFifoQueue(queue),
      contentDedup: attributes.ContentBasedDeduplication === 'true',
      maxMessageBytes: Number.isSafeInteger(size) && size > 0 ? size : SQS_MAX_MESSAGE_BYTES,
    }
    this.facts.set(queue, facts)
    return facts
  }

  async attributes(queue: string, url: string, names: QueueAttributeName[]): Promise<Partial<Record<string, string>>> {
    try {
      const result = await this.client.send(new GetQueueAttributesCommand({QueueUrl: url, AttributeNames: names}))
      return result.Attributes ?? {}
    } catch (error) {
      if (isQueueMissing(error)) this.forget(queue)
      throw sqsError(`read the attributes of queue "${queue}"`, error, this.where)
    }
  }

  /** Drops what is cached about a queue (it was deleted, or answered as missing). */
  forget(queue: string): void {
    this.urls.delete(queue)
    this.facts.delete(queue)
  }
}
