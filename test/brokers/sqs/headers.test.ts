/**
 * Application headers (String message attributes) through browse, redrive and export → replay on
 * SQS, and SQS's 10-attribute limit: a message whose headers do not fit fails, it never loses some.
 */
import assert from 'node:assert/strict'
import {after, test} from 'node:test'

import {openBroker} from '../../../src/lib/brokers/registry.js'
import {fieldsOf, make} from '../../../src/lib/envelope/index.js'
import {uniqueQueue} from '../../support/brokers.js'
import {closeRawSqs, deleteQueuesByPrefix, sqsAvailable, sqsUrl} from './support.js'
import {headersSuite} from '../../suites/headers-suite.js'

after(async () => {
  await deleteQueuesByPrefix(['bqtest-hdr-']).catch(() => undefined)
  closeRawSqs()
})

headersSuite({name: 'sqs', url: () => sqsUrl, available: sqsAvailable, derivedQueue: (queue, suffix) => `${queue}-${suffix}`})

test('sqs: app headers past the 10-attribute limit fail the publish with the reason; nothing is sent', async (t) => {
  if (!(await sqsAvailable(t))) return
  const queue = uniqueQueue('hdr-limit')
  const adapter = await openBroker(sqsUrl)
  try {
    const envelope = make('urn:babel:orders:created', '{"n":1}', {queue})
    const appHeaders = Object.fromEntries(['a', 'b', 'c', 'd', 'e'].map((name) => [`x-${name}`, name]))
    await assert.rejects(adapter.publish(queue, [{body: envelope.toBuffer(), fields: fieldsOf(envelope), appHeaders}]), /5 application headers but SQS carries at most 10 message attributes and bq's own take 6 \(room for 4\)/)
    assert.equal(await adapter.count(queue).catch(() => 0), 0)
  } finally {
    await adapter.close()
  }
})
