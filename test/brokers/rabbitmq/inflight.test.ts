/**
 * `bq inflight ls` on RabbitMQ: a consumer of the test's own (amqplib, manual acks, a prefetch)
 * holds messages unacknowledged; bq counts them through the management API.
 */
import assert from 'node:assert/strict'
import {describe, test} from 'node:test'

import amqp from 'amqplib'
import type {ConsumeMessage} from 'amqplib'

import {requireBroker, uniqueQueue} from '../../support/brokers.js'
import {hasStackTrace, jsonOutput, runBq} from '../../support/cli.js'
import {amqpUrl} from '../../suites/command-suite.js'
import {inflightSuite, type HeldWork} from '../../suites/inflight-suite.js'

const parsed = new URL(amqpUrl)
const available = (t: Parameters<typeof requireBroker>[0]) => requireBroker(t, 'RabbitMQ', parsed.hostname, Number(parsed.port || 5672))

/** Takes `count` messages as an application consumer does (prefetch, noAck false) and keeps them unacknowledged. */
async function hold(queue: string, count: number): Promise<HeldWork> {
  const connection = await amqp.connect(amqpUrl)
  const channel = await connection.createChannel()
  await channel.prefetch(count)
  const held: ConsumeMessage[] = []
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`only ${held.length} of ${count} delivered`)), 10_000)
    void channel.consume(
      queue,
      (message) => {
        if (message === null) return
        held.push(message)
        if (held.length === count) {
          clearTimeout(timer)
          resolve()
        }
      },
      {noAck: false},
    )
  })
  return {
    async release() {
      for (const message of held) channel.ack(message)
      await channel.close()
      await connection.close()
    },
  }
}

inflightSuite({
  name: 'rabbitmq',
  url: () => amqpUrl,
  available,
  hold,
  heldGauge: 'unacked',
  queuesExist: true,
  // The management API refreshes queue figures every 5 s.
  settleMs: 20_000,
})

describe('inflight ls on RabbitMQ: what it says and how it fails', () => {
  test('says the broker shows counts only and requeues unacknowledged work itself, and when', async (t) => {
    if (!(await available(t))) return
    const queue = uniqueQueue('inflight-why')
    const connection = await amqp.connect(amqpUrl)
    try {
      const channel = await connection.createChannel()
      await channel.assertQueue(queue, {durable: false})
      const result = await runBq(['inflight', 'ls', queue, '-b', amqpUrl, '--json'])
      assert.equal(result.code, 0, result.stderr)
      const listing = jsonOutput(result.stdout)
      assert.ok(listing.ok)
      const body = listing.result as {counts_only: string; returns_itself: string; gauges: Array<{name: string; help?: string}>}
      assert.deepEqual(body.gauges.map((g) => g.name), ['unacked', 'consumers'])
      assert.ok(body.gauges.every((g) => typeof g.help === 'string' && g.help !== ''))
      assert.match(body.counts_only, /AMQP 0-9-1 reads a message only by taking it/)
      assert.match(body.returns_itself, /requeues unacknowledged messages .* when the channel or connection .* closes/)
      assert.match(body.returns_itself, /past the consumer timeout \(consumer_timeout, 30 min by default/)
      await channel.deleteQueue(queue)
    } finally {
      await connection.close()
    }
  })

  test('without the management API: one line naming it and how to enable it (exit 1), no password', async (t) => {
    if (!(await available(t))) return
    const queue = uniqueQueue('inflight-nomgmt')
    const published = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '-b', amqpUrl])
    assert.equal(published.code, 0, published.stderr)
    const result = await runBq(['inflight', 'ls', queue, '-b', `${amqpUrl}?management=http://127.0.0.1:59999`])
    assert.equal(result.code, 1, result.stderr)
    assert.match(result.stderr, /AMQP cannot count unacknowledged messages, and the RabbitMQ management API at http:\/\/127\.0\.0\.1:59999 did not answer \(connection refused\): enable it/)
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
    assert.ok(!hasStackTrace(result.stderr))
    assert.doesNotMatch(result.stderr, /guest:guest/)
    const connection = await amqp.connect(amqpUrl)
    await (await connection.createChannel()).deleteQueue(queue)
    await connection.close()
  })

  test('a broker that is not there is exit 4, in one line', async (t) => {
    if (!(await available(t))) return
    const result = await runBq(['inflight', 'ls', 'orders', '-b', 'amqp://guest:guest@127.0.0.1:59998'])
    assert.equal(result.code, 4, result.stderr)
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
  })
})
