/**
 * `bq trace` on ActiveMQ Artemis (the shared trace suite): queues are read with a browser (a true
 * peek); a consumer of the test's own holds the trace's first message unsettled, which Artemis
 * shows as a count only, so trace must name the queue as holding messages it could not see. The
 * second context is an embedded store. The snapshot is each queue's counters from the management
 * API, delivery counts included.
 */
import assert from 'node:assert/strict'
import {after} from 'node:test'
import type {TestContext} from 'node:test'

import {requireBroker} from '../../support/brokers.js'
import {traceSuite, type HeldWork} from '../../suites/trace-suite.js'
import {RawClient, destroyQueues, queueAttribute, settle} from './support.js'

const artemisUrl = process.env.BQ_TEST_ARTEMIS_URL ?? 'artemis://bq:bq@127.0.0.1:5673'
const parsed = new URL(artemisUrl)
const available = (t: TestContext) => requireBroker(t, 'Artemis', parsed.hostname, Number(parsed.port || 5672))

const made = new Set<string>()
after(async () => {
  if (made.size > 0) await destroyQueues(artemisUrl, [...made]).catch(() => undefined)
})

async function hold(queue: string, count: number): Promise<HeldWork> {
  made.add(queue)
  const raw = await RawClient.open(artemisUrl)
  const receiver = await raw.receiver(queue)
  const held = await receiver.take(count)
  assert.equal(held.length, count, 'deliveries taken')
  return {
    async release() {
      for (const {delivery} of held) delivery.release()
      await settle()
      await receiver.close()
      raw.close()
    },
  }
}

async function snapshot(queues: string[]): Promise<unknown> {
  const out: Record<string, unknown> = {}
  for (const queue of queues) {
    made.add(queue)
    out[queue] = await Promise.all(['MessageCount', 'DeliveringCount', 'MessagesAcknowledged', 'MessagesAdded'].map((attribute) => queueAttribute(artemisUrl, queue, attribute).catch(() => null)))
  }
  return out
}

traceSuite({name: 'Artemis', url: () => artemisUrl, available, hold, snapshot})
