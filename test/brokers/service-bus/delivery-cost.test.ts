/**
 * Delivery counts on Service Bus, through the built CLI against bq's test server: a redrive
 * abandons what it leaves behind, and abandon raises DeliveryCount.
 * - A dead-letter sub-queue (`<queue>/$DeadLetterQueue`, the usual DLQ) counts nothing: Service
 *   Bus cannot dead-letter from a DLQ, so the count rises and nothing acts on it; bq asks for no
 *   consent there.
 * - A queue used as the DLQ (`--dlq parking`) dead-letters a message at its MaxDeliveryCount: bq
 *   refuses a redrive there without --accept-delivery-cost, before anything is received. A dry run
 *   peeks, which costs nothing, so it runs.
 */
import assert from 'node:assert/strict'
import {after, before, describe, test} from 'node:test'

import {ServiceBusClient} from '@azure/service-bus'

import type {BrokerAdapter} from '../../../src/lib/brokers/adapter.js'
import {openBroker} from '../../../src/lib/brokers/registry.js'
import {annotate, fieldsOf, make} from '../../../src/lib/envelope/index.js'
import {uniqueQueue} from '../../support/brokers.js'
import {hasStackTrace, jsonOutput, runBq} from '../../support/cli.js'
import {startServiceBusTestServer, type ServiceBusTestServer} from './server/server.js'

const MAX_DELIVERY_COUNT = 2
let server: ServiceBusTestServer
let raw: ServiceBusClient
before(async () => {
  server = await startServiceBusTestServer({maxDeliveryCount: MAX_DELIVERY_COUNT})
  raw = new ServiceBusClient(server.connectionString)
})
after(async () => {
  await raw.close()
  await server.close()
})

async function withAdapter<T>(fn: (adapter: BrokerAdapter) => Promise<T>): Promise<T> {
  const adapter = await openBroker(server.connectionString)
  try {
    return await fn(adapter)
  } finally {
    await adapter.close()
  }
}

/** Dead letters of `queue`, two per group; the group is the dead_letter reason. */
function deadLetters(queue: string, groups: string[]) {
  return groups.flatMap((group) =>
    [0, 1].map((k) => {
      const envelope = annotate(make('urn:babel:orders:created', `{"group":"${group}","k":${k}}`, {queue}), {reason: group, originalQueue: queue, error: 'boom', failedAt: 1749132730000, attempts: 3})
      return {body: envelope.toBuffer(), fields: fieldsOf(envelope)}
    }),
  )
}

/** The group of an envelope in an AMQP data section (the JSON text between the section's header and its end). */
function groupOf(body: Buffer): string {
  const text = body.toString('latin1')
  return (JSON.parse(Buffer.from(text.slice(text.indexOf('{'), text.lastIndexOf('}') + 1), 'latin1').toString('utf8')) as {data: {group: string}}).data.group
}

/** Group and delivery count (as stored: 0 = never delivered) of every message on an entity, by group. */
function stored(path: string): Array<[string, number]> {
  return server
    .entity(path)
    .all()
    .map((m) => [groupOf(m.parts.body), m.deliveryCount] as [string, number])
    .sort((x, y) => x[0].localeCompare(y[0]))
}

async function redrive(queue: string, dlq: string, extra: string[]) {
  const result = await runBq(['dlq', 'redrive', queue, '--dlq', dlq, ...extra, '--json', '-b', server.connectionString])
  assert.ok(!hasStackTrace(result.stderr), result.stderr)
  return {code: result.code, output: jsonOutput(result.stdout), stdout: result.stdout}
}

describe('service-bus: what a redrive costs in delivery counts', () => {
  test('a queue used as the DLQ: a dry run peeks for free; a redrive needs --accept-delivery-cost; with it, what is left behind reaches MaxDeliveryCount and is dead-lettered', async () => {
    const queue = uniqueQueue('sb-cost')
    const parking = `${queue}-parking`
    await withAdapter((adapter) => adapter.publish(parking, deadLetters(queue, ['a', 'b', 'c'])))

    const dry = await redrive(queue, parking, ['--dry-run'])
    assert.equal(dry.code, 0, dry.stdout)
    assert.deepEqual(stored(parking).map(([, count]) => count), [0, 0, 0, 0, 0, 0], 'the dry run peeked')

    for (const extra of [['--select', 'reason=a', '--yes'], ['--yes']]) {
      const refused = await redrive(queue, parking, extra)
      assert.equal(refused.code, 2, refused.stdout)
      assert.equal(!refused.output.ok && refused.output.error.code, 'delivery-cost')
      assert.match(!refused.output.ok ? refused.output.error.message : '', new RegExp(`Service Bus queue "${parking}" counts deliveries.*DeliveryCount.*add --accept-delivery-cost`))
    }
    const human = await runBq(['dlq', 'redrive', queue, '--dlq', parking, '--select', 'reason=a', '--yes', '-b', server.connectionString])
    assert.equal(human.code, 2)
    assert.equal(human.stderr.trimEnd().split('\n').length, 1, human.stderr)
    assert.deepEqual(stored(parking).map(([, count]) => count), [0, 0, 0, 0, 0, 0], 'nothing was received')

    const first = await redrive(queue, parking, ['--select', 'reason=a', '--yes', '--accept-delivery-cost'])
    assert.equal(first.code, 0, first.stdout)
    assert.deepEqual(stored(parking), [['b', 1], ['b', 1], ['c', 1], ['c', 1]], 'one abandon each')
    const second = await redrive(queue, parking, ['--select', 'reason=b', '--yes', '--accept-delivery-cost'])
    assert.equal(second.code, 0, second.stdout)
    // c was abandoned a second time: at MaxDeliveryCount 2 the entity dead-letters it.
    assert.deepEqual(stored(parking), [])
    assert.deepEqual(stored(`${parking}/$DeadLetterQueue`).map(([group]) => group), ['c', 'c'])
    assert.deepEqual(stored(queue).map(([group]) => group), ['a', 'a', 'b', 'b'])
  })

  test('a dead-letter sub-queue counts nothing: no consent asked, and what is left behind stays however often it is handed back', async () => {
    const queue = uniqueQueue('sb-subq')
    const dlq = `${queue}/$DeadLetterQueue`
    await withAdapter((adapter) => adapter.publish(queue, deadLetters(queue, ['a', 'b', 'c'])))
    const receiver = raw.createReceiver(queue, {skipParsingBodyAsJson: true})
    const messages = await receiver.receiveMessages(6, {maxWaitTimeInMs: 5000})
    assert.equal(messages.length, 6)
    for (const message of messages) await receiver.deadLetterMessage(message, {deadLetterReason: 'Failed', deadLetterErrorDescription: 'test'})
    await receiver.close()
    assert.equal(await withAdapter((adapter) => adapter.readsCostDeliveries!(dlq)), undefined)
    assert.ok((await withAdapter((adapter) => adapter.readsCostDeliveries!(queue))) !== undefined, 'the queue itself counts')

    for (const [run, group] of ['a', 'b', 'z', 'z'].entries()) {
      const result = await redrive(queue, dlq, ['--select', `reason=${group}`, '--yes'])
      assert.equal(result.code, 0, `run ${run}: ${result.stdout}`)
    }
    // The c messages were handed back four times, past MaxDeliveryCount 2, and are still there.
    const left = stored(dlq)
    assert.deepEqual(left.map(([group]) => group), ['c', 'c'])
    assert.ok(left.every(([, count]) => count >= 4), JSON.stringify(left))
  })
})
