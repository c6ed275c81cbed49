/**
 * `bq inflight ls` on SQS (ElasticMQ by default): a consumer of the test's own (the SDK's
 * ReceiveMessage with a long visibility timeout) holds messages; bq reads the queue's counts.
 */
import assert from 'node:assert/strict'
import {after, describe, test} from 'node:test'

import {CreateQueueCommand, DeleteMessageCommand, ReceiveMessageCommand, type Message} from '@aws-sdk/client-sqs'

import {uniqueQueue} from '../../support/brokers.js'
import {hasStackTrace, jsonOutput, runBq} from '../../support/cli.js'
import {closeRawSqs, deleteQueues, queueUrl, rawSqs, sqsAvailable, sqsUrl} from './support.js'
import {inflightSuite, type HeldWork, type InflightJson} from '../../suites/inflight-suite.js'

/** The queues this file made, deleted at the end (ElasticMQ keeps every message in its heap). */
const made: string[] = []
after(async () => {
  await deleteQueues(made)
  closeRawSqs()
})

/** Receives `count` messages as a worker does, hidden for 10 minutes, and deletes none. */
async function hold(queue: string, count: number): Promise<HeldWork> {
  made.push(queue)
  const url = await queueUrl(queue)
  const held: Message[] = []
  const until = Date.now() + 10_000
  while (held.length < count) {
    if (Date.now() > until) throw new Error(`only ${held.length} of ${count} received`)
    const page = await rawSqs().send(new ReceiveMessageCommand({QueueUrl: url, MaxNumberOfMessages: Math.min(10, count - held.length), VisibilityTimeout: 600, WaitTimeSeconds: 1}))
    held.push(...(page.Messages ?? []))
  }
  return {
    async release() {
      for (const message of held) await rawSqs().send(new DeleteMessageCommand({QueueUrl: url, ReceiptHandle: message.ReceiptHandle}))
    },
  }
}

inflightSuite({name: 'sqs', url: () => sqsUrl, available: sqsAvailable, hold, heldGauge: 'not_visible', queuesExist: true})

async function listing(queue: string): Promise<InflightJson> {
  const result = await runBq(['inflight', 'ls', queue, '-b', sqsUrl, '--json'])
  assert.equal(result.code, 0, result.stderr)
  const output = jsonOutput(result.stdout)
  assert.ok(output.ok)
  return output.result as unknown as InflightJson
}

describe('inflight ls on SQS: delayed messages, what it says, how it fails', () => {
  test('counts delayed messages apart, says why counts only and names the queue\'s visibility timeout', async (t) => {
    if (!(await sqsAvailable(t))) return
    const queue = uniqueQueue('inflight-delay')
    made.push(queue)
    await rawSqs().send(new CreateQueueCommand({QueueName: queue, Attributes: {VisibilityTimeout: '45'}}))
    const published = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--count', '2', '--delay', '60000', '-b', sqsUrl])
    assert.equal(published.code, 0, published.stderr)
    const shown = await listing(queue)
    assert.deepEqual(shown.gauges.map((g) => [g.name, g.value]), [['not_visible', 0], ['delayed', 2]])
    assert.equal(shown.elements.length, 0)
    assert.match(shown.counts_only ?? '', /SQS has no way to read a message other than receiving it/)
    assert.match(shown.returns_itself ?? '', /visible again by itself when its visibility timeout ends \(the queue's VisibilityTimeout is 45 s/)
  })

  test('an unreachable endpoint is exit 4, in one line', async () => {
    const result = await runBq(['inflight', 'ls', 'orders', '-b', 'sqs://us-east-1?endpoint=http://127.0.0.1:9'])
    assert.equal(result.code, 4, result.stderr)
    assert.ok(!hasStackTrace(result.stderr), result.stderr)
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
  })

  test('a name SQS does not allow is exit 2, before any call', async () => {
    const result = await runBq(['inflight', 'ls', 'orders.dlq', '-b', sqsUrl])
    assert.equal(result.code, 2, result.stderr)
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
  })
})
