/** Application headers (AMQP application properties) through browse, redrive and export → replay on Artemis. */
import {after} from 'node:test'
import type {TestContext} from 'node:test'

import {requireBroker} from '../../support/brokers.js'
import {destroyQueues} from './support.js'
import {headersSuite} from '../../suites/headers-suite.js'

const artemisUrl = process.env.BQ_TEST_ARTEMIS_URL ?? 'artemis://bq:bq@127.0.0.1:5673'
const parsed = new URL(artemisUrl)

const made: string[] = []
after(async () => {
  if (made.length > 0) await destroyQueues(artemisUrl, made).catch(() => undefined)
})

headersSuite({
  name: 'artemis',
  url: () => artemisUrl,
  available: (t: TestContext) => requireBroker(t, 'Artemis', parsed.hostname, Number(parsed.port || 5672)),
  // Every queue a test makes is `<queue>` or `<queue>.<suffix>`: destroyed after the file.
  derivedQueue: (queue, suffix) => {
    made.push(queue, `${queue}.${suffix}`)
    return `${queue}.${suffix}`
  },
})
