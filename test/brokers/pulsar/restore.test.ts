/**
 * A purge backup restored with `replay --as-is` puts back what Pulsar held: every property (the
 * client's dead-letter bookkeeping among them), the key and the event time of messages another
 * producer wrote, read with a plain WebSocket reader before and after. A purge acks the messages
 * on bq's subscription and the log keeps them, so "after" is what was published after the purge.
 */
import assert from 'node:assert/strict'
import {after, describe, test} from 'node:test'

import WebSocket from 'ws'

import {uniqueQueue} from '../../support/brokers.js'
import {purgeAndRestore} from '../../suites/restore-round-trip.js'
import {admin, available, pulsarUrl, topicPath, wsBase} from './support.js'

const made: string[] = []
after(async () => {
  for (const topic of made) await fetch(`${admin.origin}/admin/v2/${topicPath(topic)}?force=true`, {method: 'DELETE'}).catch(() => undefined)
})

function envelope(queue: string, n: number): string {
  return `{"job":"urn:babel:orders:created","trace_id":"trace-${n}","data":{"order_id":${n}},"meta":{"id":"00000000-0000-4000-8000-00000000000${n}","queue":"${queue}","lang":"java","schema_version":1,"created_at":1764489600000},"attempts":3,"dead_letter":{"reason":"failed","original_queue":"${queue}","attempts":3,"lang":"java"}}`
}

interface Read {
  payload: string
  properties?: Record<string, string>
  key?: string
  eventTime?: string
}

function opened(url: string): Promise<WebSocket> {
  const socket = new WebSocket(url)
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(socket))
    socket.once('error', reject)
  })
}

async function produce(topic: string, frames: Array<Record<string, unknown>>): Promise<void> {
  const socket = await opened(`${wsBase}/ws/v2/producer/${topicPath(topic)}`)
  try {
    for (const [i, frame] of frames.entries()) {
      const reply = new Promise<string>((resolve) => socket.once('message', (data: WebSocket.RawData) => resolve(data.toString())))
      socket.send(JSON.stringify({...frame, context: String(i)}))
      assert.match(await reply, /"result":"ok"/)
    }
  } finally {
    socket.close()
  }
}

/** Every message in the topic's log, oldest first (a non-durable reader from the start). */
async function readAll(topic: string, count: number): Promise<Read[]> {
  const socket = await opened(`${wsBase}/ws/v2/reader/${topicPath(topic)}?messageId=earliest`)
  const out: Read[] = []
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`read ${out.length} of ${count} messages`)), 10_000)
      socket.on('message', (data: WebSocket.RawData) => {
        const message = JSON.parse(data.toString()) as Read & {messageId: string}
        socket.send(JSON.stringify({messageId: message.messageId}))
        out.push({payload: message.payload, properties: message.properties, key: message.key, eventTime: message.eventTime})
        if (out.length === count) {
          clearTimeout(timer)
          resolve()
        }
      })
    })
  } finally {
    socket.close()
  }
  return out
}

describe('pulsar: purge --backup, then replay --as-is', () => {
  test('properties, key and event time come back', async (t) => {
    if (!(await available(t))) return
    const queue = uniqueQueue('restore')
    const dlq = `${queue}.dlq`
    made.push(dlq)
    const body = (n: number) => Buffer.from(envelope(queue, n)).toString('base64')
    await produce(dlq, [
      {payload: body(1), key: 'their-key', eventTime: '2023-11-14T22:13:20.123Z', properties: {tenant: 'acme', REAL_TOPIC: `persistent://public/default/${queue}`, ORIGIN_MESSAGE_ID: '12:3:-1'}},
      {payload: body(2), properties: {tenant: 'globex'}},
    ])
    const before = await readAll(dlq, 2)

    const trip = await purgeAndRestore(pulsarUrl, dlq, 2)
    assert.equal(trip.backup[0].native?.broker, 'pulsar', JSON.stringify(trip.backup[0]))

    const now = (await readAll(dlq, 4)).slice(2)
    for (const [i, was] of before.entries()) {
      const {'bq-run-id': runId, ...properties} = now[i].properties ?? {}
      assert.equal(typeof runId, 'string', 'bq\'s documented run stamp is the one addition')
      assert.deepEqual({...now[i], properties}, was)
    }
    assert.equal(now[0].key, 'their-key')
  })
})
