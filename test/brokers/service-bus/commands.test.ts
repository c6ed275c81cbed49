/** Every command end to end on Azure Service Bus: the built CLI against bq's Service Bus test server (test/brokers/service-bus/server/). */
import assert from 'node:assert/strict'
import {after, before, describe, test} from 'node:test'

import {jsonOutput, jsonResult, runBq} from '../../support/cli.js'

import {startServiceBusTestServer, type ServiceBusTestServer} from './server/server.js'
import {commandSuite} from '../../suites/command-suite.js'

let server: ServiceBusTestServer
before(async () => {
  server = await startServiceBusTestServer()
})
after(() => server.close())

commandSuite({
  name: 'service-bus',
  url: () => server.connectionString,
  available: async () => true,
  createsQueuesOnFirstUse: true,
  // The suite's DLQ `<queue>.dlq` is a queue: it dead-letters at its MaxDeliveryCount (delivery-cost.test.ts).
  redriveFlags: ['--accept-delivery-cost'],
  // No management (ATOM) API on the test server: dlq ls says it cannot list the entities.
  cannotListQueues: true,
})

describe('commands on a Service Bus namespace whose entities must exist', () => {
  let strict: ServiceBusTestServer
  before(async () => {
    strict = await startServiceBusTestServer({entitiesMustExist: true})
    strict.namespace.declareQueue('orders')
  })
  after(() => strict.close())

  test('reading an entity that does not exist is a one-line queue-not-found error (exit 1); an existing empty one is empty', async () => {
    for (const args of [['dlq', 'inspect', 'missing'], ['peek', 'missing'], ['dlq', 'redrive', 'missing', '--yes'], ['peek', 'missing/$DeadLetterQueue']]) {
      const human = await runBq([...args, '-b', strict.connectionString])
      assert.equal(human.code, 1, `${args.join(' ')}: ${human.stderr}`)
      assert.match(human.stderr, /^Error: .*the entity does not exist.*\n$/)
      assert.equal(human.stderr.split('\n').length, 2, human.stderr)
      const output = jsonOutput((await runBq([...args, '-b', strict.connectionString, '--json'])).stdout)
      assert.equal(!output.ok && output.error.code, 'queue-not-found')
    }
    const empty = await runBq(['dlq', 'inspect', 'orders', '--dlq', 'orders/$DeadLetterQueue', '-b', strict.connectionString, '--json'])
    assert.equal(empty.code, 0, empty.stdout)
    assert.equal(jsonResult(empty.stdout).depth, 0)
    assert.equal((await runBq(['peek', 'orders', '-b', strict.connectionString])).code, 0)
  })
})
