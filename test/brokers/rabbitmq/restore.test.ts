/**
 * A purge backup restored with `replay --as-is` puts back what RabbitMQ held: every basic
 * property and the whole headers table of messages another producer wrote (values that differ
 * from bq's projection: its own message id, correlation id, type, app id, priority, a
 * non-persistent delivery mode, a content encoding), read with plain amqplib before and after.
 */
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {describe, test} from 'node:test'

import amqp from 'amqplib'
import type {GetMessage, Options} from 'amqplib'

import {requireBroker, uniqueQueue} from '../../support/brokers.js'
import {amqpUrl} from '../../suites/command-suite.js'
import {purgeAndRestore} from '../../suites/restore-round-trip.js'
import {runBq} from '../../support/cli.js'

const parsed = new URL(amqpUrl)

function envelope(queue: string, n: number): string {
  return `{"job":"urn:babel:orders:created","trace_id":"trace-${n}","data":{"order_id":${n}},"meta":{"id":"00000000-0000-4000-8000-00000000000${n}","queue":"${queue}","lang":"php","schema_version":1,"created_at":1764489600000},"attempts":3,"dead_letter":{"reason":"failed","original_queue":"${queue}","attempts":3,"lang":"php"}}`
}

/** Everything a consumer sees of a message but its delivery (redelivered flag, tag). */
function observed(message: GetMessage): Record<string, unknown> {
  const {headers, ...properties} = message.properties
  const defined = Object.fromEntries(Object.entries(properties).filter(([, value]) => value !== undefined))
  return {body: message.content.toString('utf8'), properties: defined, headers: headers ?? {}}
}

describe('rabbitmq: purge --backup, then replay --as-is', () => {
  test('every property and header comes back as the broker held it', async (t) => {
    if (!(await requireBroker(t, 'RabbitMQ', parsed.hostname, Number(parsed.port || 5672)))) return
    const queue = uniqueQueue('restore')
    const dlq = `${queue}.dlq`
    const connection = await amqp.connect(amqpUrl)
    try {
      const channel = await connection.createConfirmChannel()
      await channel.assertQueue(dlq, {durable: true, arguments: {'x-max-priority': 9}})
      const written: Options.Publish[] = [
        {
          contentType: 'application/json', contentEncoding: 'utf-8', deliveryMode: 1, priority: 7,
          correlationId: 'their-correlation', replyTo: 'their-replies', expiration: '3600000', messageId: 'their-message-id',
          timestamp: 1_700_000_000, type: 'their.type', userId: parsed.username || 'guest', appId: 'their-app',
          headers: {traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', 'x-tenant': 'acme', 'x-count': 42, 'x-big': 5_000_000_000, 'x-ratio': 0.25, 'x-flag': true, 'x-bytes': Buffer.from([0, 1, 254]), 'x-list': ['a', 7], 'x-table': {inner: 'v'}, 'x-null': null},
        },
        {contentType: 'text/plain', deliveryMode: 2, priority: 0, messageId: 'their-other-id', headers: {'x-attempts': 9}},
      ]
      for (const [i, options] of written.entries()) channel.sendToQueue(dlq, Buffer.from(envelope(queue, i + 1)), options)
      await channel.waitForConfirms()

      const read = async (): Promise<Array<Record<string, unknown>>> => {
        const out: Array<Record<string, unknown>> = []
        for (let i = 0; i < written.length; i++) {
          const message = await channel.get(dlq, {noAck: false})
          assert.ok(message, `message ${i + 1} of ${written.length}`)
          out.push(observed(message))
        }
        return out
      }
      const before = await read()
      channel.nackAll(true)
      await channel.checkQueue(dlq)

      const trip = await purgeAndRestore(amqpUrl, dlq, written.length)
      assert.equal(trip.backup[0].native?.broker, 'rabbitmq', JSON.stringify(trip.backup[0]))
      assert.deepEqual(trip.warnings, [])

      const after = await read()
      channel.nackAll(true)
      const key = (m: Record<string, unknown>) => (m.properties as {messageId: string}).messageId
      before.sort((a, b) => key(a).localeCompare(key(b)))
      after.sort((a, b) => key(a).localeCompare(key(b)))
      for (const [i, was] of before.entries()) {
        const now = after[i]
        assert.equal(now.body, was.body, 'the body, byte for byte')
        assert.deepEqual(now.properties, was.properties, 'every basic property')
        // The one addition is bq's documented run stamp.
        const {'bq-run-id': runId, ...headers} = now.headers as Record<string, unknown>
        assert.equal(typeof runId, 'string')
        assert.deepEqual(headers, was.headers, 'the headers table, types included')
      }
      // Not the binding's projection: the producer's own values are there.
      assert.equal((after[0].properties as {type: string}).type, 'their.type')
      assert.equal((after[0].properties as {deliveryMode: number}).deliveryMode, 1)
      await channel.deleteQueue(dlq)
    } finally {
      await connection.close()
    }
  })

  test('a user_id RabbitMQ would refuse is left out, said once, naming it', async (t) => {
    if (!(await requireBroker(t, 'RabbitMQ', parsed.hostname, Number(parsed.port || 5672)))) return
    const queue = uniqueQueue('restore-user')
    const dir = mkdtempSync(path.join(tmpdir(), 'bq-restore-user-'))
    const connection = await amqp.connect(amqpUrl)
    try {
      const file = path.join(dir, 'backup.jsonl')
      const native = {broker: 'rabbitmq', properties: {user_id: 'alice', app_id: 'their-app', delivery_mode: 2}}
      writeFileSync(file, [1, 2].map((n) => `{"envelope":${envelope(queue, n)},"headers":{},"native":${JSON.stringify(native)}}`).join('\n') + '\n')
      const restored = await runBq(['replay', file, '--as-is', '--to', queue, '--yes', '--json', '-b', amqpUrl])
      assert.equal(restored.code, 0, restored.stderr)
      const warnings = (JSON.parse(restored.stdout) as {warnings: string[]}).warnings.filter((w) => w.includes('user_id'))
      assert.equal(warnings.length, 1, restored.stdout)
      assert.match(warnings[0], /user_id is not restored \(first: "alice"\): RabbitMQ accepts only the connecting user's/)
      const channel = await connection.createChannel()
      for (let i = 0; i < 2; i++) {
        const message = await channel.get(queue, {noAck: true})
        assert.ok(message)
        assert.equal(message.properties.userId, undefined)
        assert.equal(message.properties.appId, 'their-app')
      }
      await channel.deleteQueue(queue)
    } finally {
      await connection.close()
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
