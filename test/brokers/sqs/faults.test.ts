/**
 * Network faults (outage, blip, slow link) between bq and SQS (ElasticMQ), through the fault
 * proxy: the URL's endpoint is the proxy. A 5 s visibility timeout makes what a dead run held
 * come back quickly; `settle` waits for that before the rerun and the census.
 */
import {after} from 'node:test'

import {GetQueueAttributesCommand} from '@aws-sdk/client-sqs'

import {faultSuite} from '../../suites/fault-suite.js'
import {closeRawSqs, deleteQueues, deleteQueuesByPrefix, queueUrl, rawSqs, sqsAvailable, sqsEndpoint, sqsUrlWith} from './support.js'

const VISIBILITY_SECONDS = 5
const endpoint = new URL(sqsEndpoint)

async function settle(queues: string[]): Promise<void> {
  const deadline = Date.now() + (VISIBILITY_SECONDS + 30) * 1000
  for (const queue of queues) {
    let url: string
    try {
      url = await queueUrl(queue)
    } catch {
      continue // never created
    }
    for (;;) {
      const result = await rawSqs().send(new GetQueueAttributesCommand({QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessagesNotVisible']}))
      if (result.Attributes?.ApproximateNumberOfMessagesNotVisible === '0' || Date.now() > deadline) break
      await new Promise((resolve) => setTimeout(resolve, 250))
    }
  }
}

after(async () => {
  await deleteQueuesByPrefix(['bqtest-fault']).catch(() => undefined)
  closeRawSqs()
})

faultSuite({
  name: 'SQS',
  directUrl: () => sqsUrlWith({visibility: String(VISIBILITY_SECONDS)}),
  upstream: () => ({host: endpoint.hostname, port: Number(endpoint.port || 80)}),
  proxiedUrl: (proxyPort) => sqsUrlWith({visibility: String(VISIBILITY_SECONDS), endpoint: `http://127.0.0.1:${proxyPort}`}),
  available: sqsAvailable,
  midRun: true,
  dlqName: (queue) => `${queue}-dlq`,
  settle: (_adapter, queues) => settle(queues),
  censusByDraining: true,
  dispose: deleteQueues,
})
