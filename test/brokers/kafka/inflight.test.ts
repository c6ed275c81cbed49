/**
 * `bq inflight ls` on Apache Kafka (BQ_TEST_KAFKA_URL, default kafka://127.0.0.1:19092): the lag
 * of a kafkajs consumer group that read every record and committed only some of them, as an
 * application's consumer does between its fetch and its commit.
 */
import assert from 'node:assert/strict'
import {after, describe, test} from 'node:test'
import type {TestContext} from 'node:test'

import type {Consumer} from 'kafkajs'

import {requireBroker, uniqueQueue} from '../../support/brokers.js'
import {hasStackTrace, runBq} from '../../support/cli.js'
import {inflightSuite, type HeldWork} from '../../suites/inflight-suite.js'
import {deleteTestTopics, kafkaHost, kafkaPort, kafkaUrl, rawKafka, withAdmin} from './support.js'

// Three partitions, so the lag is reported (and summed) per partition.
const url = `${kafkaUrl}${kafkaUrl.includes('?') ? '&' : '?'}partitions=3`
const available = (t: TestContext) => requireBroker(t, 'Kafka', kafkaHost, kafkaPort)
const topics: string[] = []
const groups: string[] = []

after(async () => {
  if (topics.length > 0) await deleteTestTopics(topics).catch(() => undefined)
  if (groups.length > 0) await withAdmin((admin) => admin.deleteGroups(groups)).catch(() => undefined)
})

/** Waits until `consumer` has been handed `total` records (it joins its group first: a few seconds). */
async function readAll(consumer: Consumer, topic: string, total: number): Promise<Map<number, number[]>> {
  const seen = new Map<number, number[]>()
  let count = 0
  let done!: () => void
  const all = new Promise<void>((resolve) => (done = resolve))
  await consumer.subscribe({topic, fromBeginning: true})
  await consumer.run({
    autoCommit: false,
    eachMessage: async ({partition, message}) => {
      seen.set(partition, [...(seen.get(partition) ?? []), Number(message.offset)])
      if (++count === total) done()
    },
  })
  const timeout = setTimeout(() => done(), 30_000)
  await all
  clearTimeout(timeout)
  assert.equal(count, total, `the consumer read ${count} of ${total} records`)
  return seen
}

/** A kafkajs consumer in its own group reads every record and commits all but `count` of them. */
async function hold(topic: string, count: number): Promise<HeldWork> {
  topics.push(topic)
  const groupId = `${topic}-app`
  groups.push(groupId)
  const ends = await withAdmin((admin) => admin.fetchTopicOffsets(topic))
  const total = ends.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0)
  const consumer = rawKafka().consumer({groupId, sessionTimeout: 10_000, heartbeatInterval: 1000})
  await consumer.connect()
  const seen = await readAll(consumer, topic, total)
  // Finish (commit) the first `total - count` records; every partition read gets a commit, so none is left out.
  let finish = total - count
  const commits = [...seen].map(([partition, offsets]) => {
    const done = Math.min(finish, offsets.length)
    finish -= done
    return {topic, partition, offset: String(Math.min(...offsets) + done)}
  })
  await consumer.commitOffsets(commits)
  return {
    async release() {
      await consumer.commitOffsets(ends.map((p) => ({topic, partition: p.partition, offset: p.high})))
      await consumer.disconnect()
    },
  }
}

inflightSuite({name: 'kafka', url: () => url, available, hold, heldGauge: 'lag', queuesExist: true})

describe('inflight ls on kafka: its own cases', () => {
  test('a broker that does not answer is exit 4, in one line', async (t) => {
    if (!(await available(t))) return
    const result = await runBq(['inflight', 'ls', uniqueQueue('inflight-down'), '-b', 'kafka://127.0.0.1:1', '--timeout', '5'])
    assert.equal(result.code, 4, result.stderr)
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
    assert.ok(!hasStackTrace(result.stderr))
  })

  test('bq\'s redrive lease group is not listed; its redrive group is, with its own meaning', async (t) => {
    if (!(await available(t))) return
    const topic = uniqueQueue('inflight-redrive')
    topics.push(topic)
    const dlq = `${topic}.dlq`
    assert.equal((await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', dlq, '--count', '4', '-b', kafkaUrl])).code, 0)
    const redrive = await runBq(['dlq', 'redrive', topic, '--to', topic, '--max', '1', '--yes', '-b', kafkaUrl])
    assert.equal(redrive.code, 0, redrive.stderr)
    const result = await runBq(['inflight', 'ls', dlq, '-b', kafkaUrl, '--json'])
    assert.equal(result.code, 0, result.stderr)
    const gauges = (JSON.parse(result.stdout) as {result: {gauges: Array<{name: string; value: number; labels: Record<string, string>; help: string}>}}).result.gauges
    assert.ok(gauges.every((g) => !g.labels.group.startsWith('bq-redrive-lock.')), JSON.stringify(gauges))
    const own = gauges.filter((g) => g.labels.group === `bq-redrive.${dlq}`)
    assert.ok(own.length > 0, JSON.stringify(gauges))
    assert.equal(own.reduce((sum, g) => sum + g.value, 0), 3)
    assert.match(own[0].help, /redrive/)
  })
})
