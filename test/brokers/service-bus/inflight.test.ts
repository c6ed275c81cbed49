/**
 * `bq inflight ls` on Azure Service Bus, against bq's Service Bus test server
 * (test/brokers/service-bus/server/): an application's receiver (@azure/service-bus, peek-lock)
 * takes messages and does not settle them.
 *
 * Service Bus has no count of locked messages (a peek-locked message is `active`, as one waiting
 * is), so the suite's held gauge counts the held messages among the waiting ones
 * (heldAmongWaiting). The default test server creates entities on first use (as the command suite
 * says, createsQueuesOnFirstUse), so the suite sees a missing queue as an empty one; a server
 * whose entities must exist, as on real Service Bus, checks the queue-not-found refusal below.
 */
import assert from 'node:assert/strict'
import {after, before, describe, test} from 'node:test'

import {ServiceBusClient, type ServiceBusReceivedMessage} from '@azure/service-bus'

import {hasStackTrace, runBq} from '../../support/cli.js'
import {uniqueQueue} from '../../support/brokers.js'
import {inflightJson, inflightSuite, type HeldWork, type InflightJson} from '../../suites/inflight-suite.js'
import {startServiceBusTestServer, type ServiceBusTestServer} from './server/server.js'

let server: ServiceBusTestServer
let client: ServiceBusClient
before(async () => {
  server = await startServiceBusTestServer()
  client = new ServiceBusClient(server.connectionString)
})
after(async () => {
  await client.close()
  await server.close()
})

/** A peek-lock receiver takes `count` messages and settles none of them until release(). */
async function hold(queue: string, count: number): Promise<HeldWork> {
  const receiver = client.createReceiver(queue, {receiveMode: 'peekLock', skipParsingBodyAsJson: true})
  const held: ServiceBusReceivedMessage[] = []
  const deadline = Date.now() + 20_000
  while (held.length < count && Date.now() < deadline) held.push(...(await receiver.receiveMessages(count - held.length, {maxWaitTimeInMs: 2000})))
  assert.equal(held.length, count, `the receiver took ${held.length} of ${count}`)
  return {
    async release() {
      for (const message of held) await receiver.completeMessage(message)
      await receiver.close()
    },
  }
}

inflightSuite({name: 'service-bus', url: () => server.connectionString, available: async () => true, hold, heldGauge: 'active', heldAmongWaiting: true, queuesExist: false})

const value = (listing: InflightJson, name: string) => listing.gauges.find((g) => g.name === name)?.value

describe('inflight ls on service-bus: its own cases', () => {
  test('scheduled and deferred messages are counted apart from the active ones', async () => {
    const queue = uniqueQueue('inflight-states')
    assert.equal((await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--count', '4', '-b', server.connectionString])).code, 0)
    assert.equal((await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--count', '2', '--delay', '3600000', '-b', server.connectionString])).code, 0)
    const receiver = client.createReceiver(queue, {receiveMode: 'peekLock', skipParsingBodyAsJson: true})
    const [deferred] = await receiver.receiveMessages(1, {maxWaitTimeInMs: 5000})
    await receiver.deferMessage(deferred)
    await receiver.close()
    const {code, output, stderr} = await inflightJson(server.connectionString, queue)
    assert.equal(code, 0, stderr)
    const listing = (output as {result: unknown}).result as InflightJson
    assert.deepEqual([value(listing, 'active'), value(listing, 'scheduled'), value(listing, 'deferred')], [3, 2, 1])
    assert.match(listing.counts_only ?? '', /lock/)
    assert.match(listing.returns_itself ?? '', /LockDuration/)
  })

  describe('on a namespace whose entities must exist (as real Service Bus)', () => {
    let strict: ServiceBusTestServer
    before(async () => {
      strict = await startServiceBusTestServer({entitiesMustExist: true})
    })
    after(() => strict.close())

    test('an entity that does not exist is exit 1 queue-not-found, in one line', async () => {
      const queue = uniqueQueue('inflight-missing')
      const {code, output, stderr} = await inflightJson(strict.connectionString, queue)
      assert.equal(code, 1, stderr)
      assert.ok(!output.ok && output.error.code === 'queue-not-found', JSON.stringify(output))
      const plain = await runBq(['inflight', 'ls', queue, '-b', strict.connectionString])
      assert.equal(plain.code, 1)
      assert.equal(plain.stderr.trim().split('\n').length, 1, plain.stderr)
      assert.ok(!hasStackTrace(plain.stderr))
    })
  })

  test('a namespace that does not answer is exit 4, in one line', async () => {
    const unreachable = server.connectionString.replace(/Endpoint=sb:\/\/[^/;]+/, 'Endpoint=sb://127.0.0.1:1')
    const result = await runBq(['inflight', 'ls', uniqueQueue('inflight-down'), '-b', unreachable, '--timeout', '5'])
    assert.equal(result.code, 4, result.stderr)
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
    assert.ok(!hasStackTrace(result.stderr))
  })
})
