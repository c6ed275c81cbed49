/**
 * In-flight work on Redis, through bin/run.js: `bq inflight ls` (the shared suite) and
 * `bq inflight return`, on the SDKs' layout (`<queue>:processing`) and Laravel's (`queues:<queue>`,
 * `:reserved`, `:delayed`, `:notify`). Consumers are played with ioredis directly, as an SDK or a
 * Laravel worker takes and acknowledges work, never with bq.
 */
import assert from 'node:assert/strict'
import {spawn} from 'node:child_process'
import {after, describe, test, type TestContext} from 'node:test'
import {Redis} from 'ioredis'

import {make} from '../../../src/lib/envelope/index.js'
import {requireBroker, uniqueQueue} from '../../support/brokers.js'
import {binRun, hasStackTrace, jsonOutput, runBq} from '../../support/cli.js'
import {inflightSuite} from '../../suites/inflight-suite.js'

const url = process.env.BQ_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0'
const parsed = new URL(url)
const laravelUrl = `${url}${url.includes('?') ? '&' : '?'}prefix=queues:`
const available = (t: TestContext) => requireBroker(t, 'Redis', parsed.hostname, Number(parsed.port || 6379))

let raw: Redis | undefined
function redis(): Redis {
  raw ??= new Redis(url, {maxRetriesPerRequest: 1})
  return raw
}
const used: string[] = []
after(async () => {
  if (raw === undefined) return
  for (const queue of used) {
    const keys = await raw.keys(`*${queue}*`)
    if (keys.length > 0) await raw.del(...keys)
  }
  raw.disconnect()
})
function queueName(label: string): string {
  const queue = uniqueQueue(`inflight-${label}`)
  used.push(queue)
  return queue
}

/** An SDK consumer (Go, Python, Java, .NET): BLMOVE <queue> <queue>:processing LEFT RIGHT, and LREM on ack. */
const sdk = {
  list: (queue: string) => queue,
  taken: (queue: string) => `${queue}:processing`,
  async take(queue: string, count: number): Promise<Buffer[]> {
    const pipeline = redis().pipeline()
    for (let i = 0; i < count; i++) pipeline.lmoveBuffer(queue, `${queue}:processing`, 'LEFT', 'RIGHT')
    return ((await pipeline.exec()) ?? []).map(([, value]) => value as Buffer).filter((value) => value !== null)
  },
  ack: async (queue: string, element: Buffer) => (await redis().lrem(`${queue}:processing`, 1, element)) === 1,
}

/**
 * Laravel's worker: its pop script (LPOP the queue, ZADD the job to `:reserved` scored by the
 * reservation's expiry in Unix seconds, LPOP `:notify`), and ZREM on delete. The BabelQueue
 * driver's job is the envelope, kept as it is.
 */
const LARAVEL_POP = `
local job = redis.call('lpop', KEYS[1])
if job then
  redis.call('zadd', KEYS[2], ARGV[1], job)
  redis.call('lpop', KEYS[3])
end
return job
`
const laravel = {
  list: (queue: string) => `queues:${queue}`,
  taken: (queue: string) => `queues:${queue}:reserved`,
  async take(queue: string, count: number, expiresAtSeconds = Math.floor(Date.now() / 1000) + 90): Promise<Buffer[]> {
    const list = `queues:${queue}`
    const out: Buffer[] = []
    for (let i = 0; i < count; i++) {
      const job = (await redis().callBuffer('EVAL', LARAVEL_POP, 3, list, `${list}:reserved`, `${list}:notify`, expiresAtSeconds)) as Buffer | null
      if (job !== null) out.push(job)
    }
    return out
  },
  ack: async (queue: string, element: Buffer) => (await redis().zrem(`queues:${queue}:reserved`, element)) === 1,
}

inflightSuite({
  name: 'Redis (SDK :processing)',
  url: () => url,
  available,
  heldGauge: 'processing',
  elementPlace: 'processing',
  queuesExist: false,
  async hold(queue, count) {
    used.push(queue)
    const taken = await sdk.take(queue, count)
    return {release: async () => void (await Promise.all(taken.map((element) => sdk.ack(queue, element))))}
  },
})

inflightSuite({
  name: 'Redis (Laravel :reserved)',
  url: () => laravelUrl,
  available,
  heldGauge: 'reserved',
  elementPlace: 'reserved',
  queuesExist: false,
  async hold(queue, count) {
    used.push(queue)
    const taken = await laravel.take(queue, count)
    return {release: async () => void (await Promise.all(taken.map((element) => laravel.ack(queue, element))))}
  },
})

/** Envelope text with numbers and escapes a JSON round trip would change: a return must keep it byte for byte. */
function envelopeText(queue: string, n: number, createdAt = Date.now()): Buffer {
  const envelope = make('urn:babel:orders:created', `{"order_id":${n},"big":9007199254740993,"amount":99.90,"e":1e3,"z":-0,"name":"caf\\u00e9"}`, {queue, createdAt})
  // Some were tried before: a return keeps the consumer's count.
  return n % 2 === 1 ? Buffer.from(envelope.toBuffer().toString('utf8').replace(/"attempts":0}$/, '"attempts":2}')) : envelope.toBuffer()
}

async function seed(list: string, queue: string, count: number, createdAt?: number): Promise<Buffer[]> {
  const bodies = Array.from({length: count}, (_, i) => envelopeText(queue, i + 1, createdAt))
  for (let i = 0; i < bodies.length; i += 1000) {
    await redis().rpush(list, ...bodies.slice(i, i + 1000))
    // Laravel pushes one wake-up entry per job.
    if (list.startsWith('queues:')) await redis().rpush(`${list}:notify`, ...bodies.slice(i, i + 1000).map(() => '1'))
  }
  return bodies
}

async function returnJson(target: string, queue: string, extra: string[]): Promise<{code: number; result: Record<string, unknown>; stderr: string}> {
  const run = await runBq(['inflight', 'return', queue, '-b', target, ...extra, '--json'])
  assert.ok(!hasStackTrace(run.stderr), run.stderr)
  const output = jsonOutput(run.stdout)
  const result = output.ok ? output.result : {error: output.error, ...(output.result ?? {})}
  return {code: run.code, result, stderr: run.stderr}
}

const idOf = (element: Buffer) => (JSON.parse(element.toString('utf8')) as {meta: {id: string}}).meta.id

for (const [layout, consumer, target] of [
  ['SDK layout', sdk, () => url],
  ['Laravel layout', laravel, () => laravelUrl],
] as const) {
  describe(`inflight return on Redis, ${layout}`, () => {
    test('a dry run changes nothing', async (t) => {
      if (!(await available(t))) return
      const queue = queueName('dry')
      await seed(consumer.list(queue), queue, 6)
      await consumer.take(queue, 4)
      const before = await snapshot(consumer, queue)
      const {code, result, stderr} = await returnJson(target(), queue, ['--dry-run'])
      assert.equal(code, 0, stderr)
      assert.deepEqual(result.counts, {examined: 4, returned: 0, would_return: 4, skipped: 0, poison: 0, failed: 0})
      assert.deepEqual(await snapshot(consumer, queue), before)
    })

    test('returns stuck elements to the head of the queue, byte for byte, in taken order', async (t) => {
      if (!(await available(t))) return
      const queue = queueName('head')
      const bodies = await seed(consumer.list(queue), queue, 6)
      const taken = await consumer.take(queue, 3)
      assert.ok(sameBytes(taken, bodies.slice(0, 3)))
      const {code, result, stderr} = await returnJson(target(), queue, ['--yes'])
      assert.equal(code, 0, stderr)
      assert.equal((result.counts as {returned: number}).returned, 3)
      assert.equal(result.acknowledged_meanwhile, 0)
      // The head is what consumers take next: the three taken first, then the three never taken.
      const now = await redis().lrangeBuffer(consumer.list(queue), 0, -1)
      assert.ok(sameBytes(inTakenOrder(consumer, now.slice(0, 3)), inTakenOrder(consumer, bodies.slice(0, 3))), 'the taken ones, byte for byte, at the head')
      assert.ok(sameBytes(now.slice(3), bodies.slice(3)), 'the rest as it was')
      assert.equal(await takenCount(consumer, queue), 0)
      if (consumer === laravel) assert.equal(await redis().llen(`${consumer.list(queue)}:notify`), bodies.length, 'the notify list stays in step')
      // attempts is the consumer's: bq did not touch it (the bytes above include it).
      const table = await runBq(['inflight', 'ls', queue, '-b', target()])
      assert.equal(table.code, 0, table.stderr)
    })

    test('--older-than returns only elements at least that old', async (t) => {
      if (!(await available(t))) return
      const queue = queueName('older')
      const old = await seed(consumer.list(queue), queue, 2, Date.now() - 3_600_000)
      const young = await seed(consumer.list(queue), queue, 2)
      await consumer.take(queue, 4)
      const {code, result, stderr} = await returnJson(target(), queue, ['--older-than', '30m', '--yes'])
      assert.equal(code, 0, stderr)
      assert.deepEqual(result.counts, {examined: 4, returned: 2, would_return: 0, skipped: 2, poison: 0, failed: 0})
      assert.ok(sameBytes(inTakenOrder(consumer, await redis().lrangeBuffer(consumer.list(queue), 0, -1)), inTakenOrder(consumer, old)), 'the old ones returned')
      assert.equal(await takenCount(consumer, queue), 2)
      const left = consumer === sdk ? await redis().lrangeBuffer(consumer.taken(queue), 0, -1) : await redis().zrangeBuffer(consumer.taken(queue), 0, -1)
      assert.ok(sameBytes(inTakenOrder(consumer, left), inTakenOrder(consumer, young)), 'the young ones still taken')
    })

    test('a return is recorded in the run ledger', async (t) => {
      if (!(await available(t))) return
      const queue = queueName('ledger')
      const bodies = await seed(consumer.list(queue), queue, 2)
      await consumer.take(queue, 2)
      const {code, result, stderr} = await returnJson(target(), queue, ['--yes', '--reason', 'worker died'])
      assert.equal(code, 0, stderr)
      const runId = result.run_id as string
      assert.ok(runId, JSON.stringify(result))
      const listed = await runBq(['runs', 'list'])
      assert.equal(listed.code, 0, listed.stderr)
      assert.match(listed.stdout, new RegExp(`${runId.slice(0, 8)}.*inflight return`))
      const shown = await runBq(['runs', 'show', runId, '--json'])
      assert.equal(shown.code, 0, shown.stderr)
      const text = shown.stdout
      assert.match(text, /inflight return/)
      assert.match(text, /worker died/)
      for (const body of bodies) assert.ok(text.includes(idOf(body)), 'the ledger names every returned id')
    })
  })
}

describe('inflight return on Redis: refusals and edges', () => {
  test('an expired Laravel reservation counts as stuck whatever its age; one not expired and young does not', async (t) => {
    if (!(await available(t))) return
    const queue = queueName('expired')
    const bodies = await seed(laravel.list(queue), queue, 2)
    await laravel.take(queue, 1, Math.floor(Date.now() / 1000) - 5)
    await laravel.take(queue, 1)
    const listing = await runBq(['inflight', 'ls', queue, '-b', laravelUrl, '--json'])
    const elements = (jsonOutput(listing.stdout) as unknown as {result: {elements: Array<{expires_at: string}>}}).result.elements
    assert.ok(Date.parse(elements[0].expires_at) < Date.now(), 'expires_at is the score, in ms, as a time')
    const {code, result, stderr} = await returnJson(laravelUrl, queue, ['--older-than', '1h', '--yes'])
    assert.equal(code, 0, stderr)
    assert.equal((result.counts as {returned: number}).returned, 1)
    assert.ok(sameBytes(await redis().lrangeBuffer(laravel.list(queue), 0, -1), [bodies[0]]))
  })

  test('nothing in flight is success with nothing moved; a non-terminal run without --yes changes nothing', async (t) => {
    if (!(await available(t))) return
    const queue = queueName('empty')
    const empty = await returnJson(url, queue, ['--yes'])
    assert.equal(empty.code, 0, empty.stderr)
    assert.equal((empty.result.counts as {examined: number}).examined, 0)
    await seed(queue, queue, 1)
    await sdk.take(queue, 1)
    const unconfirmed = await runBq(['inflight', 'return', queue, '-b', url])
    assert.equal(unconfirmed.code, 2)
    assert.match(unconfirmed.stderr, /nothing was changed/)
    assert.equal(unconfirmed.stderr.trim().split('\n').length, 1, unconfirmed.stderr)
    assert.equal(await redis().llen(`${queue}:processing`), 1)
  })

  test('hostile input is one line with a usage exit code', async (t) => {
    if (!(await available(t))) return
    for (const args of [
      ['inflight', 'return', 'q', '-b', url, '--older-than', 'ten minutes', '--yes'],
      ['inflight', 'return', 'q', '-b', url, '--where', 'data.(', '--yes'],
      ['inflight', 'return', 'q', '-b', url, '--select', 'nokey', '--yes'],
    ]) {
      const run = await runBq(args)
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`)
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr)
    }
    const unreachable = await runBq(['inflight', 'return', 'q', '-b', 'redis://127.0.0.1:1', '--yes'])
    assert.equal(unreachable.code, 4, unreachable.stderr)
  })

  test('a broker where bq returns nothing says so and moves nothing (exit 2, unsupported)', async () => {
    const run = await runBq(['inflight', 'return', 'q', '-b', `sqlite://${process.env.TMPDIR ?? '/tmp'}/bq-inflight-${Date.now()}.db`, '--yes', '--json'])
    assert.equal(run.code, 2, run.stderr)
    const output = jsonOutput(run.stdout)
    assert.ok(!output.ok && output.error.code === 'unsupported', run.stdout)
  })

  test('a protected context refuses --yes (no --max bounds a return)', async (t) => {
    if (!(await available(t))) return
    const queue = queueName('protected')
    await seed(queue, queue, 1)
    await sdk.take(queue, 1)
    const config = (await import('node:fs')).mkdtempSync(`${process.env.TMPDIR ?? '/tmp'}/bq-ctx-`)
    const env = {XDG_CONFIG_HOME: config}
    const added = await runBq(['context', 'add', 'prod', '-b', url, '--protected'], {env})
    assert.equal(added.code, 0, added.stderr)
    const run = await runBq(['inflight', 'return', queue, '--context', 'prod', '--yes', '--json'], {env})
    assert.equal(run.code, 2, run.stderr)
    const output = jsonOutput(run.stdout)
    assert.ok(!output.ok && output.error.code === 'protected-context', run.stdout)
    assert.equal(await redis().llen(`${queue}:processing`), 1)
  })
})

describe('inflight return on Redis racing live consumers', () => {
  for (const [layout, consumer, target] of [
    ['SDK layout', sdk, () => url],
    ['Laravel layout', laravel, () => laravelUrl],
  ] as const) {
    test(`${layout}: no element its consumer acknowledged comes back`, {timeout: 300_000}, async (t) => {
      if (!(await available(t))) return
      // Timing decides how much the two overlap: up to 3 attempts to see both sides win some.
      let overlapped = false
      for (let attempt = 0; attempt < 3 && !overlapped; attempt++) {
        const queue = queueName('race')
        const count = 3000
        const bodies = await seed(consumer.list(queue), queue, count)
        const taken = await (consumer === laravel ? laravelTakeAll(queue, count) : sdk.take(queue, count))
        assert.equal(taken.length, count)
        // The consumer acknowledges in random order while bq returns, from the moment bq's
        // connection appears; an ack that finds the element gone lost the race (it is back in the queue).
        const order = [...taken].sort(() => Math.random() - 0.5)
        const acked = new Set<string>()
        const before = bqClients(await redis().client('LIST') as string)
        let running = true
        const run = runBq(['inflight', 'return', queue, '-b', target(), '--yes', '--json']).finally(() => (running = false))
        const acking = (async () => {
          while (running && bqClients(await redis().client('LIST') as string).every((id) => before.includes(id))) await new Promise((resolve) => setTimeout(resolve, 1))
          for (const element of order) {
            if (!running) break
            if (await consumer.ack(queue, element)) acked.add(idOf(element))
          }
        })()
        const [result] = await Promise.all([run, acking])
        assert.equal(result.code, 0, result.stderr)
        const report = (jsonOutput(result.stdout) as unknown as {result: {counts: {returned: number}; acknowledged_meanwhile: number}}).result
        const back = (await redis().lrangeBuffer(consumer.list(queue), 0, -1)).map(idOf)
        const seen = new Map<string, number>()
        for (const id of back) seen.set(id, (seen.get(id) ?? 0) + 1)
        assert.deepEqual([...acked].filter((id) => seen.has(id)).slice(0, 5), [], 'an acknowledged element came back')
        assert.deepEqual([...seen].filter(([, n]) => n > 1).slice(0, 5), [], 'an element came back twice')
        assert.equal(await takenCount(consumer, queue), 0)
        assert.equal(back.length + acked.size, bodies.length, 'every element is acknowledged or back in the queue')
        assert.equal(report.counts.returned, back.length)
        overlapped = acked.size > 0 && back.length > 0
        t.diagnostic(`${layout} attempt ${attempt}: ${acked.size} acknowledged by the consumer, ${report.counts.returned} returned, ${report.acknowledged_meanwhile} acknowledged between bq's read and its move`)
      }
      assert.ok(overlapped, 'the consumer and bq never raced')
    })
  }
})

/** The ids of the clients named bq (the CLI's Redis connections), from CLIENT LIST. */
function bqClients(list: string): string[] {
  return list.split('\n').filter((line) => / name=bq /.test(line)).map((line) => /^id=(\d+)/.exec(line)?.[1] ?? '')
}

describe('SIGKILL during inflight return on Redis', () => {
  const trials = Number(process.env.BQ_INFLIGHT_CRASH_TRIALS ?? 6)
  const count = Number(process.env.BQ_INFLIGHT_CRASH_ELEMENTS ?? 5000)
  for (const [layout, consumer, target] of [
    ['SDK layout', sdk, () => url],
    ['Laravel layout', laravel, () => laravelUrl],
  ] as const) {
    test(`${layout}: ${trials} trials of ${count} elements, killed mid-return and run again: nothing lost, nothing twice`, {timeout: 600_000}, async (t) => {
      if (!(await available(t))) return
      let midRun = 0
      for (let trial = 0; trial < trials; trial++) {
        const queue = queueName(`kill${trial}`)
        const bodies = await seed(consumer.list(queue), queue, count)
        const taken = await (consumer === laravel ? laravelTakeAll(queue, count) : sdk.take(queue, count))
        assert.equal(taken.length, count)
        // Killed once a random share of the elements has moved (polled on the broker): a point inside the run, not in its start-up.
        const killed = await returnAndKill(target(), queue, consumer.list(queue), Math.floor(count * Math.random() * 0.9) + 1)
        const stillTaken = await takenCount(consumer, queue)
        if (killed && stillTaken > 0 && stillTaken < count) midRun++
        // The documented recovery: every element is in one place or the other, so run it again.
        const again = await runBq(['inflight', 'return', queue, '-b', target(), '--yes'])
        assert.equal(again.code, 0, again.stderr)
        const seen = new Map<string, number>()
        for (const element of await redis().lrangeBuffer(consumer.list(queue), 0, -1)) seen.set(idOf(element), (seen.get(idOf(element)) ?? 0) + 1)
        const ids = bodies.map(idOf)
        assert.deepEqual(ids.filter((id) => !seen.has(id)).slice(0, 5), [], `trial ${trial}: lost`)
        assert.deepEqual([...seen].filter(([, n]) => n > 1).slice(0, 5), [], `trial ${trial}: twice`)
        assert.equal(seen.size, count)
        assert.equal(await takenCount(consumer, queue), 0)
        // Each element is byte for byte what was taken, in taken order (Laravel: in its set's order, see inTakenOrder).
        assert.ok(sameBytes(inTakenOrder(consumer, await redis().lrangeBuffer(consumer.list(queue), 0, -1)), inTakenOrder(consumer, bodies)), `trial ${trial}: not byte for byte in order`)
        t.diagnostic(`${layout} trial ${trial}: killed=${killed}, ${count - stillTaken} returned before the kill, ${stillTaken} by the rerun`)
        await redis().del(consumer.list(queue), consumer.taken(queue), `${consumer.list(queue)}:notify`)
      }
      t.diagnostic(`${layout}: ${midRun}/${trials} kills landed mid-return`)
      assert.ok(midRun >= 1, `no kill of ${trials} landed mid-return`)
    })
  }
})

/**
 * Elements in the order a return puts them back. The SDKs' processing list keeps the order of
 * taking; Laravel's reserved set orders by expiry (whole seconds, so jobs reserved in one second
 * tie) and then by the bytes, so within a second bq returns them in byte order.
 */
function inTakenOrder(consumer: typeof sdk | typeof laravel, elements: Buffer[]): Buffer[] {
  return consumer === sdk ? elements : [...elements].sort(Buffer.compare)
}

/** Byte-for-byte equality of two lists, without printing thousands of buffers when they differ. */
function sameBytes(a: Buffer[], b: Buffer[]): boolean {
  return a.length === b.length && a.every((element, i) => element.equals(b[i]))
}

async function laravelTakeAll(queue: string, count: number): Promise<Buffer[]> {
  // Laravel's pop, pipelined: one script call per job, as a worker makes them.
  const list = `queues:${queue}`
  const expires = Math.floor(Date.now() / 1000) + 90
  const pipeline = redis().pipeline()
  for (let i = 0; i < count; i++) pipeline.callBuffer('EVAL', LARAVEL_POP, 3, list, `${list}:reserved`, `${list}:notify`, expires)
  return ((await pipeline.exec()) ?? []).map(([, value]) => value as Buffer).filter((value) => value !== null)
}

async function takenCount(consumer: typeof sdk | typeof laravel, queue: string): Promise<number> {
  return consumer === sdk ? redis().llen(consumer.taken(queue)) : redis().zcard(consumer.taken(queue))
}

async function snapshot(consumer: typeof sdk | typeof laravel, queue: string): Promise<unknown> {
  const list = await redis().lrangeBuffer(consumer.list(queue), 0, -1)
  const taken = consumer === sdk ? await redis().lrangeBuffer(consumer.taken(queue), 0, -1) : await redis().zrangeBuffer(consumer.taken(queue), 0, -1, 'WITHSCORES')
  return {list, taken, notify: await redis().llen(`${consumer.list(queue)}:notify`)}
}

/** Runs `bq inflight return --yes` and SIGKILLs it once the queue holds `killAt` elements; resolves whether the kill came before it ended. */
function returnAndKill(target: string, queue: string, list: string, killAt: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [binRun, 'inflight', 'return', queue, '-b', target, '--yes'], {stdio: ['ignore', 'ignore', 'pipe'], env: {...process.env, XDG_CONFIG_HOME: '/nonexistent-bq-config', BQ_CONTEXT: ''}})
    let stderr = ''
    child.stderr.on('data', (chunk) => (stderr += chunk))
    let ended = false
    const watcher = new Redis(url, {maxRetriesPerRequest: 1})
    void (async () => {
      while (!ended) {
        if ((await watcher.llen(list)) >= killAt) {
          child.kill('SIGKILL')
          return
        }
      }
    })().catch(() => undefined)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      ended = true
      watcher.disconnect()
      if (signal === null && code !== 0) reject(new Error(`inflight return exited ${code}: ${stderr}`))
      else resolve(signal === 'SIGKILL')
    })
  })
}
