/**
 * Redis Sentinel end to end through bin/run.js, against test/brokers/redis/sentinel.sh (started
 * here if it is not running; scripts/services.sh starts it for CI): commands through a
 * redis+sentinel:// URL reach the master the sentinels name, also after SENTINEL FAILOVER.
 */
import {before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {execFileSync} from 'node:child_process'
import path from 'node:path'
import {Redis} from 'ioredis'

import {requireBroker, uniqueQueue} from '../../support/brokers.js'
import {testCerts} from '../../support/certs.js'
import {type CliResult, hasStackTrace, jsonResult, runBq} from '../../support/cli.js'
import {repoRoot} from '../../support/conformance.js'

const script = path.join(repoRoot, 'test', 'brokers', 'redis', 'sentinel.sh')
const basePort = Number(process.env.BQ_REDIS_SENTINEL_PORT ?? 7211)
const sentinelPort = basePort + 2
/** The TLS-only deployment's sentinel. */
const tlsSentinelPort = basePort + 5
const masterName = 'bqmaster'
/** The first sentinel listed is not listening: bq goes on to the next one. */
const sentinelUrl = `redis+sentinel://127.0.0.1:${basePort + 8},127.0.0.1:${sentinelPort}/${masterName}`

before(() => {
  try {
    execFileSync('bash', [script, 'start'], {stdio: ['ignore', 'ignore', 'inherit']})
  } catch {
    // ready() then skips (or, under CI, fails) each test with the reason.
  }
})

async function ready(t: TestContext): Promise<boolean> {
  return requireBroker(t, 'Redis Sentinel (test/brokers/redis/sentinel.sh)', '127.0.0.1', sentinelPort)
}

async function bq(args: string[]): Promise<CliResult> {
  const result = await runBq(args)
  assert.ok(!hasStackTrace(result.stderr), result.stderr)
  return result
}

async function withClient<T>(port: number, work: (client: Redis) => Promise<T>): Promise<T> {
  const client = new Redis({host: '127.0.0.1', port, lazyConnect: true, retryStrategy: () => null})
  try {
    await client.connect()
    return await work(client)
  } finally {
    client.disconnect()
  }
}

/** The master's port as the sentinel names it now. */
function masterPort(): Promise<number> {
  return withClient(sentinelPort, async (sentinel) => Number(((await sentinel.call('SENTINEL', 'get-master-addr-by-name', masterName)) as string[])[1]))
}

describe('Redis Sentinel (redis+sentinel://)', () => {
  test('publish, peek and dlq redrive through a sentinel URL whose first sentinel is down', async (t) => {
    if (!(await ready(t))) return
    const queue = uniqueQueue('sentinel')
    const published = await bq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', `${queue}.dlq`, '--count', '3', '-b', sentinelUrl])
    assert.equal(published.code, 0, published.stderr)
    assert.match(published.stderr, new RegExp(`on redis\\+sentinel://127\\.0\\.0\\.1:${basePort + 8},127\\.0\\.0\\.1:${sentinelPort}/${masterName}`))
    const peek = await bq(['peek', `${queue}.dlq`, '-b', `${sentinelUrl}?db=0`, '--json'])
    assert.equal(jsonResult(peek.stdout).depth, 3)
    const redrive = await bq(['dlq', 'redrive', queue, '--to', queue, '--yes', '-b', sentinelUrl, '--json'])
    assert.equal(redrive.code, 0, redrive.stdout + redrive.stderr)
    assert.equal((jsonResult(redrive.stdout).counts as {redriven: number}).redriven, 3)
    // The master the sentinel names holds them.
    assert.equal(await withClient(await masterPort(), (master) => master.llen(queue)), 3)
  })

  test('after SENTINEL FAILOVER the next command reaches the new master', async (t) => {
    if (!(await ready(t))) return
    const queue = uniqueQueue('failover')
    const before = await masterPort()
    assert.equal((await bq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--count', '2', '-b', sentinelUrl])).code, 0)
    // Both copies are on the replica before it is promoted.
    await withClient(before, (master) => master.call('WAIT', '1', '5000'))
    await withClient(sentinelPort, (sentinel) => sentinel.call('SENTINEL', 'failover', masterName))
    let after = before
    for (let i = 0; i < 200 && after === before; i++) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      after = await masterPort()
    }
    assert.notEqual(after, before, 'the sentinel named a new master')
    const published = await bq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '-b', sentinelUrl])
    assert.equal(published.code, 0, published.stderr)
    const peek = await bq(['peek', queue, '-b', sentinelUrl, '--json'])
    assert.equal(jsonResult(peek.stdout).depth, 3)
    assert.equal(await withClient(after, async (master) => [((await master.call('ROLE')) as unknown[])[0], await master.llen(queue)]).then(String), 'master,3')
  })

  test('rediss+sentinel:// speaks TLS to the sentinels and to the master: ca= connects, without it exit 4 names ca=', async (t) => {
    if (!(await requireBroker(t, 'Redis Sentinel over TLS (test/brokers/redis/sentinel.sh)', '127.0.0.1', tlsSentinelPort))) return
    const queue = uniqueQueue('sentinel-tls')
    const tlsUrl = `rediss+sentinel://localhost:${tlsSentinelPort}/${masterName}`
    const published = await bq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--count', '2', '-b', `${tlsUrl}?ca=${encodeURIComponent(testCerts().ca)}`])
    assert.equal(published.code, 0, published.stderr)
    const peek = await bq(['peek', queue, '-b', `${tlsUrl}?ca=${encodeURIComponent(testCerts().ca)}`, '--json'])
    assert.equal(jsonResult(peek.stdout).depth, 2)
    const untrusted = await bq(['peek', queue, '-b', tlsUrl])
    assert.equal(untrusted.code, 4, untrusted.stderr)
    assert.match(untrusted.stderr, /the broker's TLS certificate is not trusted: pass ca=PATH/)
  })

  test('a master name the sentinels do not know is exit 4 naming it', async (t) => {
    if (!(await ready(t))) return
    const unknown = await bq(['peek', 'q', '-b', `redis+sentinel://127.0.0.1:${sentinelPort}/no-such-master`])
    assert.equal(unknown.code, 4, unknown.stderr)
    assert.match(unknown.stderr, /no sentinel \(127\.0\.0\.1:\d+\) named a master "no-such-master"/)
  })
})
