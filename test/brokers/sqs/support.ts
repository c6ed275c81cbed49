/**
 * Shared set-up for the SQS tests: the test URL (BQ_TEST_SQS_URL, default ElasticMQ on
 * 127.0.0.1:9324), dummy credentials when none are set (ElasticMQ accepts any), a raw SDK client
 * for looking at the wire, and cleanup of the queues a test created.
 */
import type {TestContext} from 'node:test'

import {DeleteQueueCommand, GetQueueUrlCommand, ListQueuesCommand, SQSClient} from '@aws-sdk/client-sqs'

import {requireBroker} from '../../support/brokers.js'

process.env.AWS_ACCESS_KEY_ID ??= 'bq-test'
process.env.AWS_SECRET_ACCESS_KEY ??= 'bq-test'
process.env.AWS_REGION ??= 'us-east-1'
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'

export const sqsUrl = process.env.BQ_TEST_SQS_URL ?? 'sqs://us-east-1?endpoint=http://127.0.0.1:9324'
const parsed = new URL(sqsUrl)
export const sqsEndpoint = parsed.searchParams.get('endpoint') ?? 'http://127.0.0.1:9324'
const endpoint = new URL(sqsEndpoint)

/** The test URL with extra parameters (e.g. a short visibility timeout). */
export function sqsUrlWith(params: Record<string, string>): string {
  const url = new URL(sqsUrl)
  for (const [key, value] of Object.entries(params)) url.searchParams.set(key, value)
  return url.href
}

export const sqsAvailable = (t: TestContext) => requireBroker(t, 'SQS (ElasticMQ)', endpoint.hostname, Number(endpoint.port || (endpoint.protocol === 'https:' ? 443 : 80)))

let raw: SQSClient | undefined
/** An SDK client of the test's own, to look at what bq put on the wire. */
export function rawSqs(): SQSClient {
  raw ??= new SQSClient({region: parsed.hostname || 'us-east-1', endpoint: sqsEndpoint})
  return raw
}

export async function queueUrl(queue: string): Promise<string> {
  const result = await rawSqs().send(new GetQueueUrlCommand({QueueName: queue}))
  return result.QueueUrl!
}

/** Deletes the queues (missing ones are fine). */
export async function deleteQueues(queues: string[]): Promise<void> {
  for (const queue of queues) {
    try {
      await rawSqs().send(new DeleteQueueCommand({QueueUrl: await queueUrl(queue)}))
    } catch {
      // Never created, or already gone.
    }
  }
}

/**
 * Deletes every queue whose name starts with one of the prefixes (the e2e and crash suites name
 * their queues with uniqueQueue(label), so `bqtest-<label>-` finds them). ElasticMQ keeps all
 * messages in its heap: queues left behind would fill it.
 */
export async function deleteQueuesByPrefix(prefixes: string[]): Promise<void> {
  for (const prefix of prefixes) {
    let token: string | undefined
    const urls: string[] = []
    do {
      const page = await rawSqs().send(new ListQueuesCommand({QueueNamePrefix: prefix, MaxResults: 1000, NextToken: token}))
      urls.push(...(page.QueueUrls ?? []))
      token = page.NextToken
    } while (token !== undefined)
    for (const url of urls) await rawSqs().send(new DeleteQueueCommand({QueueUrl: url})).catch(() => undefined)
  }
}

export function closeRawSqs(): void {
  raw?.destroy()
  raw = undefined
}
