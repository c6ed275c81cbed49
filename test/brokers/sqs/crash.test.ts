/**
 * SIGKILL during redrive on SQS (ElasticMQ by default). At least once: a copy SQS accepted whose
 * original was not deleted yet survives twice; nothing may be lost.
 *
 * A killed run leaves the messages it held invisible until their visibility timeout ends; SQS then
 * returns them by itself (`bq dlq recover` has nothing to do). The URL sets a 5 s timeout so the
 * census, which first waits for ApproximateNumberOfMessagesNotVisible to reach 0, stays short.
 *
 * The census receives and deletes (`censusByDraining`) rather than browsing: a browse gives every
 * message's visibility back, and ElasticMQ rebuilds the whole queue for each such change, so a
 * browse of 2,000 / 5,000 / 10,000 messages took 1.9 / 4.7 / 16.7 s here (quadratic). SQS itself
 * has no such cost.
 */
import {after} from 'node:test'

import {GetQueueAttributesCommand} from '@aws-sdk/client-sqs'

import {closeRawSqs, deleteQueues, deleteQueuesByPrefix, queueUrl, rawSqs, sqsAvailable, sqsUrlWith} from './support.js'
import {crashSuite} from '../../suites/crash-suite.js'

const VISIBILITY_SECONDS = 5

/** Waits (bounded) until no message of these queues is in flight any more. */
async function settle(queues: string[]): Promise<void> {
  const deadline = Date.now() + (VISIBILITY_SECONDS + 30) * 1000
  for (const queue of queues) {
    let url: string
    try {
      url = await queueUrl(queue)
    } catch {
      continue // never created: the run was killed before its first publish
    }
    for (;;) {
      const result = await rawSqs().send(new GetQueueAttributesCommand({QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessagesNotVisible']}))
      if (result.Attributes?.ApproximateNumberOfMessagesNotVisible === '0') break
      if (Date.now() > deadline) throw new Error(`messages of ${queue} are still in flight ${VISIBILITY_SECONDS + 30} s after the run ended`)
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
  }
}

// ElasticMQ keeps every queue in its heap: the trials' queues go when the test ends.
after(async () => {
  await deleteQueuesByPrefix(['bqtest-crash']).catch(() => undefined)
  closeRawSqs()
})

crashSuite({
  name: 'sqs',
  url: () => sqsUrlWith({visibility: String(VISIBILITY_SECONDS)}),
  available: sqsAvailable,
  censusByDraining: true,
  // ElasticMQ moves about 1,000 messages a second, so a 20,000-message trial costs ~24 s with its
  // census, and seeding and counting go through the AWS SDK ten messages a request: the test's own
  // process took 70-95 CPU s for 8 trials of 10,000, the most of any file. A kill lands at a random
  // point of the run either way (15-95% of a full run's time), crossing batches of ten and the
  // visibility boundaries; 4,000 (400 batches, a run of about 4 s) keeps that coverage.
  // `BQ_CRASH_MESSAGES=20000 npm run soak` runs 20 trials of 20,000.
  messages: 4_000,
  dispose: deleteQueues,
  dlqName: (queue) => `${queue}-dlq`,
  settle,
})
