/**
 * Every command end to end on SQS (ElasticMQ by default), plus what is particular to it: reading
 * needs --receive, DLQs are named with --dlq (SQS queue names have no dots), an unreachable
 * endpoint exits 4.
 */
import assert from 'node:assert/strict'
import {after, describe, test} from 'node:test'

import {GetQueueAttributesCommand, ReceiveMessageCommand} from '@aws-sdk/client-sqs'

import {uniqueQueue} from '../../support/brokers.js'
import {hasStackTrace, runBq} from '../../support/cli.js'
import {closeRawSqs, deleteQueuesByPrefix, queueUrl, rawSqs, sqsAvailable, sqsUrl} from './support.js'
import {commandSuite} from '../../suites/command-suite.js'

// The suite's queues (uniqueQueue labels of command-suite.ts and this file), so ElasticMQ's heap does not fill up.
const LABELS = ['pub', 'filter', 'dry', 'inspect', 'redrive', 'sandbox', 'bypass', 'replay', 'consent', 'dlqls', 'ledger']
after(async () => {
  await deleteQueuesByPrefix(LABELS.map((label) => `bqtest-${label}-`)).catch(() => undefined)
  closeRawSqs()
})

commandSuite({
  name: 'sqs',
  url: () => sqsUrl,
  available: sqsAvailable,
  // Reading needs --receive and lists compare as sets: from the adapter's capabilities.
  derivedQueue: (queue, suffix) => `${queue}-${suffix}`,
})

describe('sqs specifics through the CLI', () => {
  test('peek, dlq inspect and a dry run refuse without --receive (exit 2) and receive nothing', async (t) => {
    if (!(await sqsAvailable(t))) return
    const queue = uniqueQueue('consent')
    const published = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '-b', sqsUrl])
    assert.equal(published.code, 0, published.stderr)
    for (const args of [
      ['peek', queue],
      ['dlq', 'inspect', queue, '--dlq', queue],
      ['dlq', 'redrive', queue, '--dlq', queue, '--dry-run'],
    ]) {
      const refused = await runBq([...args, '-b', sqsUrl])
      assert.equal(refused.code, 2, `${args.join(' ')}: ${refused.stderr}`)
      assert.match(refused.stderr, /sqs has no true peek: .* Nothing was read; add --receive/)
      assert.equal(refused.stdout, '')
    }
    // Never received: the first receive now is the first one ever.
    const url = await queueUrl(queue)
    const attributes = await rawSqs().send(new GetQueueAttributesCommand({QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible']}))
    assert.deepEqual([attributes.Attributes?.ApproximateNumberOfMessages, attributes.Attributes?.ApproximateNumberOfMessagesNotVisible], ['1', '0'])
    const received = await rawSqs().send(new ReceiveMessageCommand({QueueUrl: url, VisibilityTimeout: 0, MessageSystemAttributeNames: ['ApproximateReceiveCount']}))
    assert.equal(received.Messages?.[0]?.Attributes?.ApproximateReceiveCount, '1')

    const peek = await runBq(['peek', queue, '-b', sqsUrl, '--receive'])
    assert.equal(peek.code, 0, peek.stderr)
    assert.match(peek.stderr, /no true peek; the 1 message\(s\) read were received and made visible again; the receive count of each rose by one/)
  })

  test('a <queue>.dlq name is refused with the --dlq hint', async (t) => {
    if (!(await sqsAvailable(t))) return
    const result = await runBq(['dlq', 'inspect', 'orders', '--receive', '-b', sqsUrl])
    assert.equal(result.code, 2)
    assert.match(result.stderr, /"orders\.dlq" is not an SQS queue name: .* --dlq orders-dlq/)
  })

  test('an unreachable endpoint exits 4 with one line, quickly', async () => {
    const started = Date.now()
    const result = await runBq(['peek', 'orders', '--receive', '-b', 'sqs://us-east-1?endpoint=http://127.0.0.1:9'])
    assert.equal(result.code, 4, result.stderr)
    assert.ok(!hasStackTrace(result.stderr), result.stderr)
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
    assert.match(result.stderr, /cannot reach sqs:\/\/us-east-1\?endpoint=http:\/\/127\.0\.0\.1:9 .*connection refused/)
    assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`)
  })
})
