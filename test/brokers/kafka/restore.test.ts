/**
 * A purge backup restored with `replay --as-is` puts back what Kafka held: the key, every header
 * as bytes (a repeated name and a value that is not UTF-8 too) and the timestamp of records
 * another producer wrote, read with a plain kafkajs consumer before and after. A purge commits
 * bq's group past the records and the log keeps them, so "after" is what was appended after it.
 */
import assert from 'node:assert/strict'
import {after, describe, test} from 'node:test'

import type {IHeaders} from 'kafkajs'

import {requireBroker, uniqueQueue} from '../../support/brokers.js'
import {purgeAndRestore} from '../../suites/restore-round-trip.js'
import {deleteTestTopics, kafkaHost, kafkaPort, kafkaUrl, rawKafka, withAdmin} from './support.js'

const made: string[] = []
after(async () => {
  await deleteTestTopics(made).catch(() => undefined)
})

function envelope(queue: string, n: number): string {
  return `{"job":"urn:babel:orders:created","trace_id":"trace-${n}","data":{"order_id":${n}},"meta":{"id":"00000000-0000-4000-8000-00000000000${n}","queue":"${queue}","lang":"go","schema_version":1,"created_at":1764489600000},"attempts":3,"dead_letter":{"reason":"failed","original_queue":"${queue}","attempts":3,"lang":"go"}}`
}

function hex(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(hex)
  return Buffer.isBuffer(value) ? value.toString('hex') : typeof value === 'string' ? Buffer.from(value).toString('hex') : value
}

interface Seen {
  offset: number
  key: string | null
  value: string
  timestamp: string
  headers: Record<string, unknown>
}

/** Every record of the topic, by offset, as a plain kafkajs consumer sees it (its group deleted after). */
async function consumeAll(topic: string, expected: number): Promise<Seen[]> {
  const groupId = `bq-test-raw-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`
  const consumer = rawKafka().consumer({groupId})
  const seen: Seen[] = []
  await consumer.connect()
  try {
    await consumer.subscribe({topic, fromBeginning: true})
    let done: () => void = () => undefined
    const finished = new Promise<void>((resolve) => (done = resolve))
    await consumer.run({
      autoCommit: false,
      eachMessage: async ({message}) => {
        const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([name, value]) => [name, hex(value)]))
        seen.push({offset: Number(message.offset), key: message.key === null ? null : message.key.toString('hex'), value: message.value?.toString('utf8') ?? '', timestamp: message.timestamp, headers})
        if (seen.length >= expected) done()
      },
    })
    let timer: NodeJS.Timeout | undefined
    await Promise.race([finished, new Promise((resolve) => (timer = setTimeout(resolve, 20_000)))])
    clearTimeout(timer)
  } finally {
    await consumer.disconnect()
    await withAdmin((admin) => admin.deleteGroups([groupId])).catch(() => undefined)
  }
  return seen.sort((a, b) => a.offset - b.offset)
}

describe('kafka: purge --backup, then replay --as-is', () => {
  test('key, every header as bytes and the timestamp come back', async (t) => {
    if (!(await requireBroker(t, 'Kafka', kafkaHost, kafkaPort))) return
    const queue = uniqueQueue('restore')
    const dlq = `${queue}.dlq`
    made.push(queue)
    await withAdmin((admin) => admin.createTopics({topics: [{topic: dlq, numPartitions: 1}], waitForLeaders: true}))
    const producer = rawKafka().producer()
    await producer.connect()
    const timestamp = String(Date.now() - 60_000)
    const headers: IHeaders = {traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', 'x-bytes': Buffer.from([0, 1, 254]), 'x-repeated': ['one', 'two']}
    try {
      await producer.send({topic: dlq, messages: [
        {key: Buffer.from([0xde, 0xad]), value: envelope(queue, 1), headers, timestamp},
        {key: null, value: envelope(queue, 2), headers: {tenant: 'globex'}, timestamp},
      ]})
    } finally {
      await producer.disconnect()
    }
    const before = await consumeAll(dlq, 2)
    assert.equal(before.length, 2)

    const trip = await purgeAndRestore(kafkaUrl, dlq, 2)
    assert.equal(trip.backup[0].native?.broker, 'kafka', JSON.stringify(trip.backup[0]))

    const now = (await consumeAll(dlq, 4)).slice(2)
    assert.equal(now.length, 2)
    for (const [i, was] of before.entries()) {
      const {'bq-run-id': runId, ...rest} = now[i].headers
      assert.equal(typeof runId, 'string', 'bq\'s documented run stamp is the one addition')
      assert.deepEqual({...now[i], offset: was.offset, headers: rest}, was)
    }
    assert.deepEqual(now[0].headers['x-repeated'], [Buffer.from('one').toString('hex'), Buffer.from('two').toString('hex')])
  })
})
