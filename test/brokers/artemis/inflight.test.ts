/**
 * `bq inflight ls` on Artemis: a consumer of the test's own (a raw rhea receiver with manual
 * settlement) holds deliveries unsettled; bq counts them through the management API.
 */
import assert from 'node:assert/strict'
import {after, describe, test} from 'node:test'
import type {TestContext} from 'node:test'

import {requireBroker, uniqueQueue} from '../../support/brokers.js'
import {hasStackTrace, jsonOutput, runBq} from '../../support/cli.js'
import {inflightSuite, type HeldWork, type InflightJson} from '../../suites/inflight-suite.js'
import {RawClient, destroyQueues, settle} from './support.js'

const artemisUrl = process.env.BQ_TEST_ARTEMIS_URL ?? 'artemis://bq:bq@127.0.0.1:5673'
const parsed = new URL(artemisUrl)
const available = (t: TestContext) => requireBroker(t, 'Artemis', parsed.hostname, Number(parsed.port || 5672))

const made: string[] = []
after(async () => {
  if (made.length > 0) await destroyQueues(artemisUrl, made).catch(() => undefined)
})

/** Receives `count` deliveries as an application consumer does (credit, no auto-accept) and settles none. */
async function hold(queue: string, count: number): Promise<HeldWork> {
  made.push(queue)
  const raw = await RawClient.open(artemisUrl)
  const receiver = await raw.receiver(queue)
  const held = await receiver.take(count)
  assert.equal(held.length, count, 'deliveries taken')
  return {
    async release() {
      for (const {delivery} of held) delivery.accept()
      await settle()
      await receiver.close()
      raw.close()
    },
  }
}

inflightSuite({name: 'artemis', url: () => artemisUrl, available, hold, heldGauge: 'delivering', queuesExist: true})

describe('inflight ls on Artemis: scheduled messages, what it says, how it fails', () => {
  test('counts scheduled messages apart, and says why counts only and when the broker returns work', async (t) => {
    if (!(await available(t))) return
    const queue = uniqueQueue('inflight-sched')
    made.push(queue)
    const published = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--count', '2', '--delay', '600000', '-b', artemisUrl])
    assert.equal(published.code, 0, published.stderr)
    const result = await runBq(['inflight', 'ls', queue, '-b', artemisUrl, '--json'])
    assert.equal(result.code, 0, result.stderr)
    const output = jsonOutput(result.stdout)
    assert.ok(output.ok)
    const listing = output.result as unknown as InflightJson
    assert.deepEqual(listing.gauges.map((g) => [g.name, g.value]), [['delivering', 0], ['scheduled', 2], ['consumers', 0]])
    assert.match(listing.counts_only ?? '', /a browser sees only messages waiting to be delivered/)
    assert.match(listing.returns_itself ?? '', /when the consumer's link, session or connection closes/)
  })

  test('a broker that is not there is exit 4, in one line', async (t) => {
    if (!(await available(t))) return
    const result = await runBq(['inflight', 'ls', 'orders', '-b', 'artemis://bq:bq@127.0.0.1:59997'])
    assert.equal(result.code, 4, result.stderr)
    assert.ok(!hasStackTrace(result.stderr), result.stderr)
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
  })
})
