// @test-uses rabbitmq redis
/** Moves between brokers, and what happens when a broker is down. */
import {describe, test} from 'node:test'
import assert from 'node:assert/strict'

import {uniqueQueue} from '../support/brokers.js'
import {hasStackTrace, runBq} from '../support/cli.js'
import {amqpUrl, brokerCases, depth, dlqExport, json, rawBodies, redisUrl} from '../suites/command-suite.js'

const brokers = [brokerCases.sqlite, brokerCases.redis, brokerCases.rabbitmq]

describe('across brokers and on failure', () => {
  test('redrive from the embedded store into Redis, and from Redis into RabbitMQ', async (t) => {
    if (!(await brokers[1].available(t)) || !(await brokers[2].available(t))) return
    const sqlite = brokers[0].url()
    const queue = uniqueQueue('cross')
    await runBq(['replay', dlqExport(queue), '--as-is', '--to', `${queue}.dlq`, '--yes', '-b', sqlite])
    const toRedis = await json(['dlq', 'redrive', queue, '--select', 'reason=failed', '--yes', '-b', sqlite, '--to-broker', redisUrl])
    assert.equal((toRedis.counts as {redriven: number}).redriven, 3)
    assert.equal(toRedis.target, redisUrl)
    assert.equal(await depth(redisUrl, queue), 3)
    assert.equal(await depth(sqlite, `${queue}.dlq`), 1)
    const redisQueue = uniqueQueue('cross2')
    await runBq(['replay', dlqExport(redisQueue), '--as-is', '--to', `${redisQueue}.dlq`, '--yes', '-b', redisUrl])
    const toRabbit = await json(['dlq', 'redrive', redisQueue, '--yes', '-b', redisUrl, '--to-broker', amqpUrl])
    assert.equal((toRabbit.counts as {redriven: number}).redriven, 4)
    assert.equal(toRabbit.target, 'amqp://guest:***@127.0.0.1:5672')
    assert.equal(await depth(amqpUrl, redisQueue), 4)
    assert.equal(await depth(redisUrl, `${redisQueue}.dlq`), 0)
  })

  test('an unreachable target leaves every message on the DLQ and exits 3', async () => {
    const sqlite = brokers[0].url()
    const queue = uniqueQueue('down')
    await runBq(['replay', dlqExport(queue), '--as-is', '--to', `${queue}.dlq`, '--yes', '-b', sqlite])
    const before = await rawBodies(sqlite, `${queue}.dlq`)
    const result = await runBq(['dlq', 'redrive', queue, '--yes', '-b', sqlite, '--to-broker', 'amqp://guest:secret@127.0.0.1:1'])
    assert.equal(result.code, 4, result.stderr)
    assert.ok(!result.stderr.includes('secret'))
    assert.deepEqual(await rawBodies(sqlite, `${queue}.dlq`), before)
  })

  test('an unreachable broker is exit 4 with the password redacted', async () => {
    const result = await runBq(['peek', 'orders', '-b', 'redis://:hunter2@127.0.0.1:1'])
    assert.equal(result.code, 4)
    assert.match(result.stderr, /^Error: cannot connect to redis:\/\/:\*\*\*@127\.0\.0\.1:1/)
    assert.ok(!result.stderr.includes('hunter2'))
    assert.ok(!hasStackTrace(result.stderr))
    const unknown = await runBq(['peek', 'orders', '-b', 'ftp://x'])
    assert.equal(unknown.code, 2)
  })
})

describe('redis replay marker', () => {
  test('the retired ?bypass_ttl= side key is refused, pointing at the frame that replaced it', async () => {
    const result = await runBq(['peek', 'orders', '-b', `${redisUrl}?bypass_ttl=120`])
    assert.equal(result.code, 2, result.stderr)
    assert.match(result.stderr, /unknown parameter "bypass_ttl" in .*: --bypass now stamps bq-replay-bypass in the SDKs' __bq_frame frame/)
    assert.ok(!hasStackTrace(result.stderr))
  })
})
