/**
 * `bq trace` on SQS (ElasticMQ; the shared trace suite). A read here is a receive (the receive
 * count rises), so trace names the queues it did not read and reads them only with
 * --accept-delivery-cost; in-flight messages are counts only. DLQs are `<queue>-dlq` (SQS names
 * have no dots); the second context is an embedded store. The snapshot is each queue's counts.
 */
import {after} from 'node:test'

import {CreateQueueCommand, GetQueueAttributesCommand} from '@aws-sdk/client-sqs'

import {traceSuite} from '../../suites/trace-suite.js'
import {closeRawSqs, deleteQueues, queueUrl, rawSqs, sqsAvailable, sqsUrl} from './support.js'

const made = new Set<string>()
after(async () => {
  await deleteQueues([...made])
  closeRawSqs()
})

async function prepare(queues: string[]): Promise<void> {
  for (const queue of queues) {
    made.add(queue)
    await rawSqs().send(new CreateQueueCommand({QueueName: queue}))
  }
}

async function snapshot(queues: string[]): Promise<unknown> {
  const out: Record<string, unknown> = {}
  for (const queue of queues) {
    const attributes = await rawSqs().send(new GetQueueAttributesCommand({QueueUrl: await queueUrl(queue), AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible']}))
    out[queue] = attributes.Attributes
  }
  return out
}

traceSuite({name: 'SQS', url: () => sqsUrl, available: sqsAvailable, snapshot, readsCost: true, dlqOf: (queue) => `${queue}-dlq`, prepare})
