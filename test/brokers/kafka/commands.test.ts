/** Every command end to end on Apache Kafka (BQ_TEST_KAFKA_URL, default kafka://127.0.0.1:19092), plus Kafka's own peek flags and redrive progress. */
import assert from 'node:assert/strict'
import {describe, test} from 'node:test'
import type {TestContext} from 'node:test'

import {requireBroker, uniqueQueue} from '../../support/brokers.js'
import {runBq} from '../../support/cli.js'
import {commandSuite, dlqExport, json, type BrokerCase} from '../../suites/command-suite.js'

const kafkaUrl = process.env.BQ_TEST_KAFKA_URL ?? 'kafka://127.0.0.1:19092'
const firstBroker = /^kafka:\/\/(?:[^@/]*@)?([^,/?]+)/.exec(kafkaUrl)?.[1] ?? '127.0.0.1:19092'

const kafka: BrokerCase = {
  name: 'kafka',
  url: () => kafkaUrl,
  available: (t: TestContext) => requireBroker(t, 'Kafka', firstBroker.replace(/:\d+$/, ''), Number(/:(\d+)$/.exec(firstBroker)?.[1] ?? 9092)),
}

commandSuite(kafka)

const ids = (result: Record<string, unknown>) => (result.messages as Array<{id: string}>).map((m) => m.id)

describe('kafka-only commands', () => {
  test('peek --since seeks each partition by time (only the records from then on are read)', async (t) => {
    if (!(await kafka.available(t))) return
    const queue = uniqueQueue('since')
    assert.equal((await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--count', '3', '-b', kafkaUrl])).code, 0)
    await new Promise((resolve) => setTimeout(resolve, 50))
    const since = new Date().toISOString()
    await new Promise((resolve) => setTimeout(resolve, 50))
    const later = (await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--count', '2', '-b', kafkaUrl])).stdout.trim().split('\n')
    const recent = await json(['peek', queue, '-b', kafkaUrl, '--since', since])
    assert.deepEqual(ids(recent), later)
    assert.equal(recent.scanned, 2)
  })

  test('peek --from-beginning, --from-offset, --from-time and --last read the log; other brokers refuse them', async (t) => {
    if (!(await kafka.available(t))) return
    const queue = uniqueQueue('log')
    const published = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--count', '5', '-b', kafkaUrl])
    assert.equal(published.code, 0, published.stderr)
    const all = published.stdout.trim().split('\n')
    assert.deepEqual(ids(await json(['peek', queue, '-b', kafkaUrl, '--last', '2'])), all.slice(3))
    assert.deepEqual(ids(await json(['peek', queue, '-b', kafkaUrl, '--from-offset', '0:3'])), all.slice(3))
    assert.deepEqual(ids(await json(['peek', queue, '-b', kafkaUrl, '--from-offset', '1'])), all.slice(1))
    assert.deepEqual(ids(await json(['peek', queue, '-b', kafkaUrl, '--from-time', '2999-01-01T00:00:00Z'])), [])
    assert.deepEqual(ids(await json(['peek', queue, '-b', kafkaUrl, '--from-time', '0'])), all)
    const bad = await runBq(['peek', queue, '-b', kafkaUrl, '--from-offset', 'x:1'])
    assert.equal(bad.code, 2)
    assert.match(bad.stderr, /expected OFFSET or PARTITION:OFFSET/)
    const elsewhere = await runBq(['peek', queue, '-b', 'sqlite:///tmp/bq-kafka-e2e-never.db', '--last', '1'])
    assert.equal(elsewhere.code, 2)
    assert.match(elsewhere.stderr, /keeps no log to read from a position/)
  })

  test('a second redrive with another selector finds what the first left, and never re-sends what it moved', async (t) => {
    if (!(await kafka.available(t))) return
    const queue = uniqueQueue('again')
    const dlq = `${queue}.dlq`
    assert.equal((await runBq(['replay', dlqExport(queue), '--as-is', '--to', dlq, '--yes', '-b', kafkaUrl])).code, 0)
    const first = await json(['dlq', 'redrive', queue, '--select', 'reason=failed', '--yes', '-b', kafkaUrl])
    assert.deepEqual(first.counts, {examined: 4, redriven: 3, would_redrive: 0, skipped: 1, poison: 0, failed: 0})
    const left = await json(['peek', dlq, '-b', kafkaUrl])
    assert.equal(left.depth, 1)
    const second = await json(['dlq', 'redrive', queue, '--to', `${queue}.sandbox`, '--yes', '-b', kafkaUrl])
    assert.deepEqual(second.counts, {examined: 1, redriven: 1, would_redrive: 0, skipped: 0, poison: 0, failed: 0})
    assert.equal((await json(['peek', dlq, '-b', kafkaUrl])).depth, 0)
    assert.equal((await json(['peek', queue, '-b', kafkaUrl])).depth, 3)
    // The DLQ topic itself still holds all four records.
    assert.equal(ids(await json(['peek', dlq, '-b', kafkaUrl, '--from-beginning'])).length, 4)
  })

  test('dlq inspect lists the retry tiers <queue>.retry.<n>', async (t) => {
    if (!(await kafka.available(t))) return
    const queue = uniqueQueue('tiers')
    assert.equal((await runBq(['replay', dlqExport(queue), '--as-is', '--to', `${queue}.dlq`, '--yes', '-b', kafkaUrl])).code, 0)
    assert.equal((await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', `${queue}.retry.1`, '--count', '2', '-b', kafkaUrl])).code, 0)
    const report = await json(['dlq', 'inspect', queue, '-b', kafkaUrl])
    assert.deepEqual(report.related_queues, [{queue: `${queue}.retry.1`, role: 'retry tier 1', count: 2}])
    const human = await runBq(['dlq', 'inspect', queue, '-b', kafkaUrl])
    assert.match(human.stderr, new RegExp(`related: ${queue}\\.retry\\.1 \\(retry tier 1, 2\\)`))
  })
})
