/**
 * `bq inflight ls` on Apache Pulsar (BQ_TEST_PULSAR_URL, default the standalone of
 * `scripts/services.sh`): a Shared subscription's consumer, through Pulsar's own WebSocket
 * consumer API (no bq code), takes messages and does not acknowledge them.
 */
import assert from 'node:assert/strict'
import {after, describe, test} from 'node:test'
import WebSocket from 'ws'

import {uniqueQueue} from '../../support/brokers.js'
import {admin, available, pulsarUrl, topicPath, wsBase} from './support.js'
import {hasStackTrace, runBq} from '../../support/cli.js'
import {inflightJson, inflightSuite, type HeldWork, type InflightJson} from '../../suites/inflight-suite.js'


const used: string[] = []
after(async () => {
  for (const q of used) await fetch(`${admin.origin}/admin/v2/${topicPath(q)}?force=true`, {method: 'DELETE'}).catch(() => undefined)
})

/**
 * A Shared consumer of its own subscription (from the earliest message) that takes exactly
 * `count` messages: no receiver queue (receiverQueueSize=0) and `count` pull-mode permits, so the
 * broker delivers no more than that.
 */
async function hold(queue: string, count: number, type = 'Shared'): Promise<HeldWork> {
  used.push(queue)
  const params = new URLSearchParams({subscriptionType: type, subscriptionInitialPosition: 'Earliest', receiverQueueSize: '0', pullMode: 'true'})
  const socket = new WebSocket(`${wsBase}/ws/v2/consumer/${topicPath(queue)}/app-${type.toLowerCase()}?${params.toString()}`)
  const held: string[] = []
  socket.on('message', (data) => held.push((JSON.parse(data.toString()) as {messageId: string}).messageId))
  await new Promise((resolve, reject) => {
    socket.once('open', resolve)
    socket.once('error', reject)
  })
  socket.send(JSON.stringify({type: 'permit', permitMessages: count}))
  const deadline = Date.now() + 20_000
  while (held.length < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
  assert.equal(held.length, count, `the consumer received ${held.length} of ${count}`)
  return {
    async release() {
      for (const messageId of held) socket.send(JSON.stringify({messageId}))
      // The WebSocket API confirms no ack: give them a moment to land before the socket closes.
      await new Promise((resolve) => setTimeout(resolve, 500))
      socket.close()
    },
  }
}

inflightSuite({name: 'pulsar', url: () => pulsarUrl, available, hold, heldGauge: 'unacked', queuesExist: true})

const gauge = (listing: InflightJson, name: string, subscription: string) => listing.gauges.find((g) => g.name === name && g.labels?.subscription === subscription)?.value

describe('inflight ls on pulsar: its own cases', () => {
  test('an Exclusive subscription counts no unacked: what its consumer holds is in its backlog', async (t) => {
    if (!(await available(t))) return
    const queue = uniqueQueue('inflight-exclusive')
    assert.equal((await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--count', '4', '-b', pulsarUrl])).code, 0)
    const held = await hold(queue, 2, 'Exclusive')
    try {
      const {code, output, stderr} = await inflightJson(pulsarUrl, queue)
      assert.equal(code, 0, stderr)
      const listing = (output as {result: unknown}).result as InflightJson
      assert.equal(gauge(listing, 'unacked', 'app-exclusive'), 0)
      assert.equal(gauge(listing, 'backlog', 'app-exclusive'), 4)
      assert.equal(gauge(listing, 'consumers', 'app-exclusive'), 1)
      assert.equal(gauge(listing, 'backlog', 'babelqueue'), 4, 'the binding\'s subscription, made by the first publish')
      assert.match(listing.returns_itself ?? '', /redelivers/)
    } finally {
      await held.release()
    }
  })

  test('an admin API that does not answer is exit 4, in one line', async (t) => {
    if (!(await available(t))) return
    const result = await runBq(['inflight', 'ls', uniqueQueue('inflight-down'), '-b', 'pulsar://127.0.0.1:1?admin=http://127.0.0.1:1', '--timeout', '5'])
    assert.equal(result.code, 4, result.stderr)
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
    assert.ok(!hasStackTrace(result.stderr))
  })
})
