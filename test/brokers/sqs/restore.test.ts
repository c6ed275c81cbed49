/**
 * A purge backup restored with `replay --as-is` puts back what SQS held: every message attribute
 * with its data type (String, Number, Binary, a custom `Number.int`) of messages another producer
 * wrote, read with the plain SDK before and after (a receive with a zero visibility timeout).
 */
import assert from 'node:assert/strict'
import {after, describe, test} from 'node:test'

import {CreateQueueCommand, ReceiveMessageCommand, SendMessageBatchCommand} from '@aws-sdk/client-sqs'
import type {Message} from '@aws-sdk/client-sqs'

import {uniqueQueue} from '../../support/brokers.js'
import {purgeAndRestore} from '../../suites/restore-round-trip.js'
import {closeRawSqs, deleteQueues, rawSqs, sqsAvailable, sqsUrl} from './support.js'

const made: string[] = []
after(async () => {
  await deleteQueues(made).catch(() => undefined)
  closeRawSqs()
})

function envelope(queue: string, n: number): string {
  return `{"job":"urn:babel:orders:created","trace_id":"trace-${n}","data":{"order_id":${n}},"meta":{"id":"00000000-0000-4000-8000-00000000000${n}","queue":"${queue}","lang":"python","schema_version":1,"created_at":1764489600000},"attempts":3,"dead_letter":{"reason":"failed","original_queue":"${queue}","attempts":3,"lang":"python"}}`
}

function observed(message: Message): Record<string, unknown> {
  const attributes = Object.fromEntries(Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [name, {type: value.DataType, text: value.StringValue, bytes: value.BinaryValue === undefined ? undefined : Buffer.from(value.BinaryValue).toString('hex')}]))
  return {body: message.Body, attributes}
}

describe('sqs: purge --backup, then replay --as-is', () => {
  test('every message attribute comes back with its data type', async (t) => {
    if (!(await sqsAvailable(t))) return
    const queue = uniqueQueue('restore')
    const dlq = `${queue}-dlq`
    made.push(dlq)
    const url = (await rawSqs().send(new CreateQueueCommand({QueueName: dlq}))).QueueUrl!
    await rawSqs().send(new SendMessageBatchCommand({
      QueueUrl: url,
      Entries: [
        {
          Id: '1', MessageBody: envelope(queue, 1),
          MessageAttributes: {
            tenant: {DataType: 'String', StringValue: 'acme'}, count: {DataType: 'Number', StringValue: '42'},
            exact: {DataType: 'Number.int', StringValue: '7'}, blob: {DataType: 'Binary', BinaryValue: Buffer.from([0, 1, 254])},
            'their-type': {DataType: 'String.custom', StringValue: 'their.type'},
          },
        },
        {Id: '2', MessageBody: envelope(queue, 2), MessageAttributes: {tenant: {DataType: 'String', StringValue: 'globex'}}},
      ],
    }))
    const read = async () => {
      const out: Message[] = []
      for (let i = 0; i < 5 && out.length < 2; i++) {
        const got = await rawSqs().send(new ReceiveMessageCommand({QueueUrl: url, MaxNumberOfMessages: 10, VisibilityTimeout: 0, MessageAttributeNames: ['All'], WaitTimeSeconds: 1}))
        for (const message of got.Messages ?? []) if (!out.some((m) => m.MessageId === message.MessageId)) out.push(message)
      }
      return out.map(observed).sort((a, b) => String(a.body).localeCompare(String(b.body)))
    }
    const before = await read()
    assert.equal(before.length, 2)
    assert.deepEqual(Object.keys(before[0].attributes as object).sort(), ['blob', 'count', 'exact', 'tenant', 'their-type'])

    const trip = await purgeAndRestore(sqsUrl, dlq, 2, ['--receive'])
    assert.equal(trip.backup[0].native?.broker, 'sqs', JSON.stringify(trip.backup[0]))

    const now = await read()
    assert.equal(now.length, 2)
    for (const [i, was] of before.entries()) {
      const {'bq-run-id': runId, ...attributes} = now[i].attributes as Record<string, {text?: string}>
      assert.equal(typeof runId?.text, 'string', 'bq\'s documented run stamp is the one addition')
      assert.deepEqual({...now[i], attributes}, was)
    }
  })
})
