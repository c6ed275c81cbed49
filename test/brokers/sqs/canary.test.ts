/** Canary redrive on SQS (ElasticMQ): a plain DLQ (the watch receives and hands back), and one with a redrive policy (every read costs a receive). */
import {after} from 'node:test'

import {CreateQueueCommand, GetQueueAttributesCommand} from '@aws-sdk/client-sqs'

import {canarySuite} from '../../suites/canary-suite.js'
import {closeRawSqs, deleteQueuesByPrefix, rawSqs, sqsAvailable, sqsUrl} from './support.js'

after(async () => {
  await deleteQueuesByPrefix(['bqtest-canary-']).catch(() => undefined)
  closeRawSqs()
})

canarySuite({
  name: 'sqs',
  url: () => sqsUrl,
  available: sqsAvailable,
  dlqOf: (queue) => `${queue}-dlq`,
  readFlags: ['--receive'],
  tests: ['abort', 'ramp'],
  countingDlq: async ({dlq}) => {
    const client = rawSqs()
    const finalUrl = (await client.send(new CreateQueueCommand({QueueName: `${dlq}-final`}))).QueueUrl
    const finalArn = (await client.send(new GetQueueAttributesCommand({QueueUrl: finalUrl, AttributeNames: ['QueueArn']}))).Attributes?.QueueArn
    await client.send(new CreateQueueCommand({QueueName: dlq, Attributes: {RedrivePolicy: JSON.stringify({deadLetterTargetArn: finalArn, maxReceiveCount: 10})}}))
  },
})
