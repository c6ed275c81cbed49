/**
 * A purge backup restored with `replay --as-is` puts back what Service Bus held: the properties a
 * sender sets and the typed application properties of messages another producer wrote, read with
 * the plain SDK (peek, which changes nothing) before and after. The MessageId comes back varied
 * per run (`<id>~<run>`), as documented: duplicate detection would drop the recorded one.
 */
import assert from 'node:assert/strict'
import {after, before, describe, test} from 'node:test'

import {ServiceBusClient} from '@azure/service-bus'
import type {ServiceBusReceivedMessage} from '@azure/service-bus'

import {uniqueQueue} from '../../support/brokers.js'
import {purgeAndRestore} from '../../suites/restore-round-trip.js'
import {startServiceBusTestServer, type ServiceBusTestServer} from './server/server.js'

let server: ServiceBusTestServer
let raw: ServiceBusClient
before(async () => {
  server = await startServiceBusTestServer()
  raw = new ServiceBusClient(server.connectionString)
})
after(async () => {
  await raw.close()
  await server.close()
})

function envelope(queue: string, n: number): string {
  return `{"job":"urn:babel:orders:created","trace_id":"trace-${n}","data":{"order_id":${n}},"meta":{"id":"00000000-0000-4000-8000-00000000000${n}","queue":"${queue}","lang":"dotnet","schema_version":1,"created_at":1764489600000},"attempts":3,"dead_letter":{"reason":"failed","original_queue":"${queue}","attempts":3,"lang":"dotnet"}}`
}

const OBSERVED = ['subject', 'correlationId', 'contentType', 'to', 'replyTo', 'replyToSessionId', 'timeToLive'] as const

function observed(message: ServiceBusReceivedMessage): Record<string, unknown> {
  const seen: Record<string, unknown> = {body: Buffer.from(message.body as Buffer).toString('utf8'), applicationProperties: {...message.applicationProperties}}
  for (const name of OBSERVED) seen[name] = message[name]
  return seen
}

describe('service-bus: purge --backup, then replay --as-is', () => {
  test('sender properties and typed application properties come back; the MessageId varied per run', async () => {
    const queue = uniqueQueue('restore')
    const dlq = `${queue}.dlq`
    const sender = raw.createSender(dlq)
    await sender.sendMessages([
      {
        body: Buffer.from(envelope(queue, 1)), messageId: 'their-message-id', subject: 'their.subject', correlationId: 'their-correlation',
        contentType: 'text/plain', to: 'their-address', replyTo: 'their-replies', replyToSessionId: 'their-reply-session', timeToLive: 3_600_000,
        applicationProperties: {tenant: 'acme', count: 42, ratio: 0.5, flag: true, when: new Date(1_700_000_000_000)},
      },
      {body: Buffer.from(envelope(queue, 2)), messageId: 'their-other-id', applicationProperties: {tenant: 'globex'}},
    ])
    await sender.close()
    const peek = async () => {
      const receiver = raw.createReceiver(dlq, {skipParsingBodyAsJson: true})
      const messages = await receiver.peekMessages(10)
      await receiver.close()
      return messages
    }
    const before = await peek()
    assert.equal(before.length, 2)

    const trip = await purgeAndRestore(server.connectionString, dlq, 2, ['--accept-delivery-cost'])
    assert.equal(trip.backup[0].native?.broker, 'service-bus', JSON.stringify(trip.backup[0]))

    const now = await peek()
    assert.equal(now.length, 2)
    const key = (m: ServiceBusReceivedMessage) => String(m.messageId)
    before.sort((a, b) => key(a).localeCompare(key(b)))
    now.sort((a, b) => key(a).localeCompare(key(b)))
    for (const [i, was] of before.entries()) {
      assert.match(key(now[i]), new RegExp(`^${key(was)}~`), 'the recorded MessageId, varied per run')
      const seen = observed(now[i])
      const {'bq-run-id': runId, ...properties} = seen.applicationProperties as Record<string, unknown>
      assert.equal(typeof runId, 'string', 'bq\'s documented run stamp is the one addition')
      assert.deepEqual({...seen, applicationProperties: properties}, observed(was), key(was))
    }
    assert.equal(now[0].subject, 'their.subject', 'not the projection (the URN)')
  })
})
