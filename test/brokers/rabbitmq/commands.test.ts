/** Every command end to end on the RabbitMQ. */
import assert from 'node:assert/strict'
import {describe, test} from 'node:test'

import amqp from 'amqplib'

import {requireBroker, uniqueQueue} from '../../support/brokers.js'
import {jsonResult, runBq} from '../../support/cli.js'
import {amqpUrl, brokerCases, commandSuite} from '../../suites/command-suite.js'

commandSuite(brokerCases.rabbitmq)

describe('dlq ls on RabbitMQ (the management HTTP API)', () => {
  const available = (t: Parameters<typeof brokerCases.rabbitmq.available>[0]) => requireBroker(t, 'RabbitMQ', new URL(amqpUrl).hostname, Number(new URL(amqpUrl).port || 5672))

  test('a queue another queue dead-letters into is listed as native, with its source', async (t) => {
    if (!(await available(t))) return
    const source = uniqueQueue('nativesrc')
    const dead = `${source}-graveyard`
    const connection = await amqp.connect(amqpUrl)
    try {
      const channel = await connection.createChannel()
      await channel.assertQueue(dead, {durable: false, autoDelete: false})
      await channel.assertQueue(source, {durable: false, arguments: {'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': dead}})
      const listing = await runBq(['dlq', 'ls', '-b', amqpUrl, '--match', `${source}*`, '--json'])
      assert.equal(listing.code, 0, listing.stderr)
      const dlqs = jsonResult(listing.stdout).dlqs as Array<Record<string, unknown>>
      assert.deepEqual(dlqs.map((d) => [d.dlq, d.kind, d.depth, d.original_queues]), [[dead, 'native', 0, [source]]])
      await channel.deleteQueue(source)
      await channel.deleteQueue(dead)
    } finally {
      await connection.close()
    }
  })

  test('without the management API: one line saying AMQP cannot list queues and how to enable it (exit 1), no password', async (t) => {
    if (!(await available(t))) return
    const result = await runBq(['dlq', 'ls', '-b', `${amqpUrl}?management=http://127.0.0.1:59999`])
    assert.equal(result.code, 1, result.stderr)
    assert.match(result.stderr, /^Error: cannot list the queues on amqp:\/\/guest:\*\*\*@.*AMQP cannot list queues, and the RabbitMQ management API at http:\/\/127\.0\.0\.1:59999 did not answer \(connection refused\): enable it \(rabbitmq-plugins enable rabbitmq_management\)/)
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
    assert.doesNotMatch(result.stderr, /guest:guest/)
  })
})
