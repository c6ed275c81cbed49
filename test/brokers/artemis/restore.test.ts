/**
 * A purge backup restored with `replay --as-is` puts back what Artemis held: the body section
 * (an AMQP string value stays one), durability, priority, the properties section, the message
 * annotations and the application properties of messages another AMQP producer wrote, read with
 * plain rhea (a browsing receiver, which changes nothing) before and after.
 */
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, describe, test} from 'node:test'

import rhea from 'rhea'
import type {Message} from 'rhea'

import {requireBroker, uniqueQueue} from '../../support/brokers.js'
import {purgeAndRestore} from '../../suites/restore-round-trip.js'
import {runBq} from '../../support/cli.js'
import {RawClient, destroyQueues} from './support.js'

const artemisUrl = process.env.BQ_TEST_ARTEMIS_URL ?? 'artemis://bq:bq@127.0.0.1:5673'
const parsed = new URL(artemisUrl)
const made: string[] = []

after(async () => {
  if (made.length > 0) await destroyQueues(artemisUrl, made).catch(() => undefined)
})

function envelope(queue: string, n: number): string {
  return `{"job":"urn:babel:orders:created","trace_id":"trace-${n}","data":{"order_id":${n}},"meta":{"id":"00000000-0000-4000-8000-00000000000${n}","queue":"${queue}","lang":"java","schema_version":1,"created_at":1764489600000},"attempts":3,"dead_letter":{"reason":"failed","original_queue":"${queue}","attempts":3,"lang":"java"}}`
}

const FIELDS = [
  'durable', 'priority', 'ttl', 'first_acquirer',
  'message_id', 'user_id', 'to', 'subject', 'reply_to', 'correlation_id', 'content_type', 'content_encoding',
  'absolute_expiry_time', 'creation_time', 'group_id', 'group_sequence', 'reply_to_group_id',
] as const

/** Everything a consumer sees of a message but its delivery (delivery-count). */
function observed(message: Message): Record<string, unknown> {
  const body = message.body as unknown
  const section = body !== null && typeof body === 'object' && 'typecode' in body ? (body as {typecode: number; content: Buffer}) : undefined
  const seen: Record<string, unknown> = {
    body_section: section === undefined ? typeof body : section.typecode === 0x75 ? 'data' : String(section.typecode),
    body: section === undefined ? body : Buffer.from(section.content).toString('utf8'),
    message_annotations: {...message.message_annotations},
    application_properties: {...message.application_properties},
  }
  for (const field of FIELDS) {
    const value = message[field] as unknown
    seen[field] = value instanceof Date ? value.getTime() : Buffer.isBuffer(value) ? `bytes:${value.toString('hex')}` : value
  }
  return seen
}

async function browseAll(queue: string, count: number): Promise<Array<Record<string, unknown>>> {
  const raw = await RawClient.open(artemisUrl)
  try {
    const receiver = await raw.receiver(queue, true)
    const got = await receiver.take(count)
    await receiver.close()
    return got.map((delivery) => observed(delivery.message))
  } finally {
    raw.close()
  }
}

describe('artemis: purge --backup, then replay --as-is', () => {
  test('body section, durability, priority, properties, annotations and application properties come back', async (t) => {
    if (!(await requireBroker(t, 'Artemis', parsed.hostname, Number(parsed.port || 5672)))) return
    const queue = uniqueQueue('restore')
    const dlq = `${queue}.dlq`
    made.push(dlq)
    const raw = await RawClient.open(artemisUrl)
    try {
      await raw.send(dlq, [
        {
          durable: false, priority: 7, ttl: 3_600_000,
          message_id: 'their-message-id', user_id: Buffer.from('bq'), to: 'their-address', subject: 'their.subject',
          reply_to: 'their-replies', correlation_id: 'their-correlation', content_type: 'text/plain', content_encoding: 'utf-8',
          creation_time: new Date(1_700_000_000_123), group_id: 'their-group', group_sequence: 3, reply_to_group_id: 'their-reply-group',
          message_annotations: {'x-opt-their-annotation': 'kept'},
          application_properties: {tenant: 'acme', count: 42, negative: -5, ratio: 0.5, flag: true},
          body: envelope(queue, 1),
        },
        {durable: true, message_id: 'their-other-id', application_properties: {tenant: 'globex'}, body: rhea.message.data_section(Buffer.from(envelope(queue, 2)))},
      ])
    } finally {
      raw.close()
    }
    const before = await browseAll(dlq, 2)
    assert.equal(before.length, 2)

    const trip = await purgeAndRestore(artemisUrl, dlq, 2)
    assert.equal(trip.backup[0].native?.broker, 'artemis', JSON.stringify(trip.backup[0]))
    assert.deepEqual(trip.warnings, [])

    const now = await browseAll(dlq, 2)
    assert.equal(now.length, 2)
    const key = (m: Record<string, unknown>) => String(m.message_id)
    before.sort((a, b) => key(a).localeCompare(key(b)))
    now.sort((a, b) => key(a).localeCompare(key(b)))
    for (const [i, was] of before.entries()) {
      const {'bq-run-id': runId, ...properties} = now[i].application_properties as Record<string, unknown>
      assert.equal(typeof runId, 'string', 'bq\'s documented run stamp is the one addition')
      assert.deepEqual({...now[i], application_properties: properties}, was, `message ${key(was)}`)
    }
    // The producer's choices, not bq's projection.
    const first = now.find((m) => m.message_id === 'their-message-id')!
    assert.equal(first.body_section, 'string')
    assert.equal(first.durable, false)
    assert.equal(first.subject, 'their.subject')
  })

  test('properties recorded on another broker are not written here: said once, the projection instead', async (t) => {
    if (!(await requireBroker(t, 'Artemis', parsed.hostname, Number(parsed.port || 5672)))) return
    const queue = uniqueQueue('restore-foreign')
    made.push(queue)
    const dir = mkdtempSync(path.join(tmpdir(), 'bq-restore-foreign-'))
    try {
      const file = path.join(dir, 'backup.jsonl')
      const native = {broker: 'rabbitmq', properties: {type: 'their.type', delivery_mode: 1}}
      writeFileSync(file, [1, 2].map((n) => `{"envelope":${envelope(queue, n)},"headers":{},"native":${JSON.stringify(native)}}`).join('\n') + '\n')
      const restored = await runBq(['replay', file, '--as-is', '--to', queue, '--yes', '--json', '-b', artemisUrl])
      assert.equal(restored.code, 0, restored.stderr)
      const warnings = (JSON.parse(restored.stdout) as {warnings: string[]}).warnings
      assert.equal(warnings.filter((w) => w.includes('recorded on rabbitmq')).length, 1, restored.stdout)
      const seen = await browseAll(queue, 2)
      assert.deepEqual(seen.map((m) => [m.subject, m.durable]), [['urn:babel:orders:created', true], ['urn:babel:orders:created', true]])
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
