/**
 * `bq inflight ls` and `bq inflight return` on a Redis Cluster (test/brokers/redis/cluster.sh, the
 * cluster tests' own 7101..7106), through bin/run.js from a node that owns none of the keys, so
 * every command is routed by the cluster client. A hash-tagged queue keeps `:processing` (and
 * Laravel's `:reserved`, `:notify`) in its slot; an untagged one cannot be returned in one script.
 */
import assert from 'node:assert/strict'
import {after, describe, test, type TestContext} from 'node:test'
import type {Cluster} from 'ioredis'

import {make} from '../../../src/lib/envelope/index.js'
import {hasStackTrace, jsonOutput, runBq} from '../../support/cli.js'
import {clusterNodes, ensureCluster, testCluster, urlAvoiding, type Node} from './cluster-support.js'

const FIRST = 7101
let nodes: Node[] | undefined
let cluster: Cluster | undefined
after(() => cluster?.disconnect())

async function ready(t: TestContext): Promise<boolean> {
  if (nodes !== undefined) return true
  if (!(await ensureCluster(t, FIRST))) return false
  nodes = await clusterNodes(FIRST)
  cluster = await testCluster(FIRST)
  return true
}

const stem = () => `inflight-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 6)}`

async function seedAndTake(list: string, taken: string, count: number, laravel: boolean): Promise<Buffer[]> {
  const bodies = Array.from({length: count}, (_, i) => make('urn:babel:orders:created', `{"n":${i}}`, {queue: list}).toBuffer())
  await cluster!.rpush(list, ...bodies)
  for (let i = 0; i < count; i++) {
    const job = (await cluster!.lpopBuffer(list)) as Buffer
    if (laravel) await cluster!.zadd(taken, Math.floor(Date.now() / 1000) + 90, job)
    else await cluster!.rpush(taken, job)
  }
  return bodies
}

async function bq(args: string[]): Promise<{code: number; output: ReturnType<typeof jsonOutput>; stderr: string}> {
  const run = await runBq([...args, '--json'])
  assert.ok(!hasStackTrace(run.stderr), run.stderr)
  assert.doesNotMatch(run.stdout + run.stderr, /MOVED|ASK \d|CROSSSLOT/)
  return {code: run.code, output: jsonOutput(run.stdout), stderr: run.stderr}
}

describe('inflight on a Redis Cluster', () => {
  test('SDK layout, hash-tagged: listed and returned to the head, byte for byte', async (t) => {
    if (!(await ready(t))) return
    const queue = `{${stem()}}`
    const bodies = await seedAndTake(queue, `${queue}:processing`, 4, false)
    const url = urlAvoiding(nodes!, queue)
    const listed = await bq(['inflight', 'ls', queue, '-b', url])
    assert.equal(listed.code, 0, listed.stderr)
    assert.ok(listed.output.ok && (listed.output.result.elements as unknown[]).length === 4, JSON.stringify(listed.output))
    const returned = await bq(['inflight', 'return', queue, '-b', url, '--yes'])
    assert.equal(returned.code, 0, returned.stderr)
    const now = await cluster!.lrangeBuffer(queue, 0, -1)
    assert.ok(now.length === 4 && now.every((element, i) => element.equals(bodies[i])), 'back at the head in taken order')
    assert.equal(await cluster!.llen(`${queue}:processing`), 0)
    await cluster!.del(queue)
  })

  test('Laravel layout, hash-tagged: :reserved returned and :notify kept in step', async (t) => {
    if (!(await ready(t))) return
    const name = `{${stem()}}`
    const list = `queues:${name}`
    await seedAndTake(list, `${list}:reserved`, 3, true)
    const url = `${urlAvoiding(nodes!, list)}?prefix=queues:`
    const returned = await bq(['inflight', 'return', name, '-b', url, '--yes'])
    assert.equal(returned.code, 0, returned.stderr)
    assert.equal(await cluster!.llen(list), 3)
    assert.equal(await cluster!.zcard(`${list}:reserved`), 0)
    assert.equal(await cluster!.llen(`${list}:notify`), 3)
    await cluster!.del(list, `${list}:notify`)
  })

  test('an untagged queue whose :processing is in another slot is refused before anything moves (exit 2)', async (t) => {
    if (!(await ready(t))) return
    // Find an untagged name whose :processing lands in another slot (most do).
    let queue = stem()
    const {keySlot} = await import('../../../src/lib/brokers/redis/cluster.js')
    while (keySlot(queue) === keySlot(`${queue}:processing`)) queue = stem()
    await cluster!.rpush(`${queue}:processing`, make('urn:babel:orders:created', '{}', {queue}).toBuffer())
    const url = urlAvoiding(nodes!, queue, `${queue}:processing`)
    const listed = await bq(['inflight', 'ls', queue, '-b', url])
    assert.equal(listed.code, 0, listed.stderr)
    const refused = await bq(['inflight', 'return', queue, '-b', url, '--yes'])
    assert.equal(refused.code, 2, refused.stderr)
    assert.ok(!refused.output.ok && /hash slots/.test(refused.output.error.message), JSON.stringify(refused.output))
    assert.equal(await cluster!.llen(`${queue}:processing`), 1)
    await cluster!.del(`${queue}:processing`)
  })
})
