/**
 * The shared broker contract against RabbitMQ (BQ_TEST_AMQP_URL, default
 * amqp://guest:guest@127.0.0.1:5672), opened through the registry as `bq` does.
 *
 * A crashed drain (a process that exits without closing): the adapter declares
 * `afterCrash: 'broker-returns'`, so the suite's crash test checks that RabbitMQ itself requeues
 * the dead connection's un-acked messages, in place, and that `recover()` returns 0. A reset
 * connection and a SIGKILLed process are tested in adapter.test.ts too.
 */
import type {TestContext} from 'node:test'

import amqp from 'amqplib'

import {openBroker} from '../../../src/lib/brokers/registry.js'
import {requireBroker} from '../../support/brokers.js'
import {brokerContractSuite} from '../../suites/contract-suite.js'
import {runFixture} from '../../suites/fixtures/run-fixture.js'

const url = process.env.BQ_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672'
const parsed = new URL(url)
const host = parsed.hostname
const port = Number(parsed.port || 5672)

async function cleanup(queues: string[]): Promise<void> {
  const connection = await amqp.connect(url, {noDelay: true})
  connection.on('error', () => undefined)
  try {
    for (const queue of queues) {
      // A fresh channel per queue: a failed delete closes its channel.
      const channel = await connection.createChannel()
      channel.on('error', () => undefined)
      await channel.deleteQueue(queue).catch(() => undefined)
      await channel.close().catch(() => undefined)
    }
  } finally {
    await connection.close().catch(() => undefined)
  }
}

brokerContractSuite('rabbitmq', {
  open: () => openBroker(url),
  available: (t: TestContext) => requireBroker(t, 'RabbitMQ', host, port),
  crashDrain: async (q, take, release) => {
    await runFixture('crash-drain.ts', [url, q, String(take), String(release)])
  },
  cleanup,
  secrets: parsed.password === '' || parsed.password === 'guest' ? [] : [parsed.password],
})
