/**
 * `bq trace` on Redis (the shared trace suite): an SDK consumer, played with ioredis, moves the
 * trace's first message into `<queue>:processing`; the second context is the same server under
 * another key prefix.
 */
import assert from 'node:assert/strict'
import {randomUUID} from 'node:crypto'
import {after, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import {Redis} from 'ioredis'

import {make} from '../../../src/lib/envelope/index.js'
import {requireBroker, uniqueQueue} from '../../support/brokers.js'
import {jsonOutput, runBq} from '../../support/cli.js'
import {traceSuite, type HeldWork} from '../../suites/trace-suite.js'

const url = process.env.BQ_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0'
const parsed = new URL(url)
const SECOND_PREFIX = 'bqtrace2:'
const secondUrl = `${url}${url.includes('?') ? '&' : '?'}prefix=${SECOND_PREFIX}`
const available = (t: TestContext) => requireBroker(t, 'Redis', parsed.hostname, Number(parsed.port || 6379))

let raw: Redis | undefined
function redis(): Redis {
  raw ??= new Redis(url, {maxRetriesPerRequest: 1})
  return raw
}
const used = new Set<string>()
after(async () => {
  if (raw === undefined) return
  for (const queue of used) {
    const keys = [...(await raw.keys(`${queue}*`)), ...(await raw.keys(`${SECOND_PREFIX}${queue}*`))]
    if (keys.length > 0) await raw.del(...keys)
  }
  raw.disconnect()
})

async function hold(queue: string, count: number): Promise<HeldWork> {
  used.add(queue)
  const taken: Buffer[] = []
  for (let i = 0; i < count; i++) {
    const element = await redis().lmoveBuffer(queue, `${queue}:processing`, 'LEFT', 'RIGHT')
    if (element !== null) taken.push(element)
  }
  // Back to the head in order, as an SDK's recovery returns unfinished work.
  return {release: async () => void (await Promise.all(taken.map(() => redis().lmove(`${queue}:processing`, queue, 'RIGHT', 'LEFT'))))}
}

/** Every key of these queues under both prefixes, in order: lists, processing and bq's staging list. */
async function snapshot(queues: string[]): Promise<unknown> {
  const out: Record<string, Buffer[]> = {}
  for (const queue of queues) {
    used.add(queue.replace(/\.dlq$/, ''))
    for (const prefix of ['', SECOND_PREFIX]) {
      for (const key of [`${prefix}${queue}`, `${prefix}${queue}:processing`, `${prefix}${queue}:bq-held`]) out[key] = await redis().lrangeBuffer(key, 0, -1)
    }
  }
  return out
}

traceSuite({name: 'Redis', url: () => url, secondUrl: () => secondUrl, available, hold, heldPlace: 'processing', snapshot})

describe('bq trace on Redis: bq\'s staging list and a queue known only by it', () => {
  test('a message in <queue>:bq-held (a drain\'s released work) is found as staged, though the queue\'s own list is gone', async (t) => {
    if (!(await available(t))) return
    const queue = uniqueQueue('trace-staged')
    used.add(queue)
    const traceId = randomUUID()
    const body = make('urn:babel:orders:created', '{"order_id":7}', {queue, traceId}).toBuffer()
    await redis().rpush(`${queue}:bq-held`, body)
    const run = await runBq(['trace', traceId, '-b', url, '--queue', queue, '--json'])
    assert.equal(run.code, 0, run.stderr)
    const sightings = (jsonOutput(run.stdout).result as {sightings: Array<{state: string; queue: string}>}).sightings
    assert.deepEqual(sightings.map((s) => [s.queue, s.state]), [[queue, 'staged']])
    assert.deepEqual(await redis().lrangeBuffer(`${queue}:bq-held`, 0, -1), [body], 'nothing moved')
  })
})

describe('bq trace on Redis, Laravel layout', () => {
  test('a job in <queue>:reserved (a Laravel worker\'s reservation) is found in flight, place reserved', async (t) => {
    if (!(await available(t))) return
    const queue = uniqueQueue('trace-laravel')
    used.add(`queues:${queue}`)
    const traceId = randomUUID()
    const body = make('urn:babel:orders:created', '{"order_id":8}', {queue, traceId}).toBuffer()
    await redis().zadd(`queues:${queue}:reserved`, Math.floor(Date.now() / 1000) + 90, body)
    const laravelUrl = `${url}${url.includes('?') ? '&' : '?'}prefix=queues:`
    const run = await runBq(['trace', traceId, '-b', laravelUrl, '--queue', queue, '--json'])
    assert.equal(run.code, 0, run.stderr)
    const sightings = (jsonOutput(run.stdout).result as {sightings: Array<{state: string; place: string; queue: string}>}).sightings
    assert.deepEqual(sightings.map((s) => [s.queue, s.state, s.place]), [[queue, 'in flight', 'reserved']])
    assert.equal(await redis().zcard(`queues:${queue}:reserved`), 1, 'nothing moved')
  })
})
