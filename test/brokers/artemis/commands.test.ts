/**
 * Every command end to end on ActiveMQ Artemis (BQ_TEST_ARTEMIS_URL, default
 * artemis://bq:bq@127.0.0.1:5673), plus reading and redriving Artemis's own dead-letter address.
 */
import assert from 'node:assert/strict'
import {after, describe, test} from 'node:test'
import type {TestContext} from 'node:test'

import {requireBroker, uniqueQueue} from '../../support/brokers.js'
import {runBq} from '../../support/cli.js'
import {RawClient, destroyQueues, settle} from './support.js'
import {commandSuite, json, type BrokerCase} from '../../suites/command-suite.js'

const artemisUrl = process.env.BQ_TEST_ARTEMIS_URL ?? 'artemis://bq:bq@127.0.0.1:5673'
const parsed = new URL(artemisUrl)

const artemis: BrokerCase = {
  name: 'artemis',
  url: () => artemisUrl,
  available: (t: TestContext) => requireBroker(t, 'Artemis', parsed.hostname, Number(parsed.port || 5672)),
}

commandSuite(artemis)

const made: string[] = []
after(async () => {
  if (made.length > 0) await destroyQueues(artemisUrl, made).catch(() => undefined)
})

/** Fails a queue's messages until Artemis moves them to its dead-letter address (DLQ). */
async function deadLetterAll(queue: string, count: number, attempts = 10): Promise<void> {
  const raw = await RawClient.open(artemisUrl)
  try {
    for (let i = 0; i < attempts; i++) {
      const receiver = await raw.receiver(queue)
      const got = await receiver.take(count)
      assert.equal(got.length, count, `delivery ${i + 1}`)
      for (const d of got) d.delivery.modified({delivery_failed: true})
      await settle()
      await receiver.close()
    }
  } finally {
    raw.close()
  }
}

describe('artemis-only commands', () => {
  test('dlq inspect and dlq redrive read Artemis\'s own dead-letter address (--dlq DLQ)', async (t) => {
    if (!(await artemis.available(t))) return
    const queue = uniqueQueue('native')
    made.push(queue)
    const published = await runBq(['publish', 'urn:babel:orders:created', '-d', '{"order_id":1042}', '-q', queue, '--count', '2', '-b', artemisUrl])
    assert.equal(published.code, 0, published.stderr)
    const ids = published.stdout.trim().split('\n')
    await deadLetterAll(queue, 2)
    assert.equal((await json(['peek', queue, '-b', artemisUrl])).depth, 0)

    const inspect = await json(['dlq', 'inspect', queue, '--dlq', 'DLQ', '--list', '-b', artemisUrl])
    const mine = (inspect.messages as Array<Record<string, unknown>>).filter((m) => ids.includes(m.id as string))
    assert.equal(mine.length, 2, JSON.stringify(inspect).slice(0, 500))
    const groups = await json(['dlq', 'inspect', queue, '--dlq', 'DLQ', '--group-by', 'original_queue', '-b', artemisUrl])
    const group = (groups.groups as Array<{key: Record<string, string>; count: number}>).find((g) => g.key.original_queue === queue)
    assert.equal(group?.count, 2)

    const dry = await runBq(['dlq', 'redrive', queue, '--dlq', 'DLQ', '--select', `original_queue=${queue}`, '--dry-run', '-b', artemisUrl])
    assert.equal(dry.code, 0, dry.stderr)
    assert.match(dry.stderr, /2 would be moved/)
    const run = await json(['dlq', 'redrive', queue, '--dlq', 'DLQ', '--select', `original_queue=${queue}`, '--yes', '-b', artemisUrl])
    assert.equal((run.counts as {redriven: number}).redriven, 2)
    const back = await json(['peek', queue, '-b', artemisUrl])
    assert.deepEqual((back.messages as Array<{id: string}>).map((m) => m.id), ids)
    const left = await json(['dlq', 'inspect', queue, '--dlq', 'DLQ', '--list', '-b', artemisUrl])
    assert.equal((left.messages as Array<{id: string}>).filter((m) => ids.includes(m.id)).length, 0)
  })

  test('an unreachable broker exits 4 with one redacted line', async () => {
    const result = await runBq(['peek', 'orders', '-b', 'artemis://bq:hunter2-secret@127.0.0.1:5999'])
    assert.equal(result.code, 4)
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
    assert.match(result.stderr, /cannot connect to Artemis at artemis:\/\/bq:\*\*\*@127\.0\.0\.1:5999: connection refused/)
    assert.ok(!result.stderr.includes('hunter2-secret'), 'no password')
  })
})
