/**
 * The reference SDKs' Redis wire dialect through the real CLI (bin/run.js) on a real Redis: the
 * Python SDK's stored values (test/support/interop/) pushed raw into lists, then peek, dlq
 * inspect, validate, redrive (with and without --bypass) and replay, checking the exact bytes
 * that land in Redis; and Laravel's `:notify` list kept in step under `?prefix=queues:`.
 */
import {after, describe, test, type TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {Redis} from 'ioredis'

import {decodeEnvelope, resetForRedriveBytes} from '../../../src/lib/envelope/index.js'
import {readFrame, writeFrame} from '../../../src/lib/envelope/frame.js'
import {requireBroker, uniqueQueue} from '../../support/brokers.js'
import {hasStackTrace, jsonResult, runBq} from '../../support/cli.js'
import {pythonRedriveBypass, pythonSdk} from '../../support/interop.js'
import {runFixture} from '../../suites/fixtures/run-fixture.js'

const url = process.env.BQ_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0'
const parsed = new URL(url)
const TRACEPARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
const dir = mkdtempSync(path.join(tmpdir(), 'bq-frames-'))

let client: Redis | undefined
const redis = () => (client ??= new Redis(url, {maxRetriesPerRequest: 1}))
const used: string[] = []
const queue = (label: string) => {
  const q = uniqueQueue(`redis-frames-${label}`)
  used.push(q)
  return q
}
const available = (t: TestContext) => requireBroker(t, 'Redis', parsed.hostname, Number(parsed.port || 6379))

after(async () => {
  rmSync(dir, {recursive: true, force: true})
  if (client === undefined) return
  for (const q of used) {
    const keys = await client.keys(`*${q}*`)
    if (keys.length > 0) await client.del(...keys)
  }
  await client.quit()
})

/** A list's elements exactly as stored. */
const stored = async (key: string) => (await redis().lrangeBuffer(key, 0, -1)).map((value) => value.toString('utf8'))
/** The envelope text a frame carries. */
const bodyOf = (frame: string) => (JSON.parse(frame) as {body: string}).body

async function bq(args: string[], options: {code?: number} = {}) {
  const result = await runBq(args)
  assert.ok(!hasStackTrace(result.stderr), result.stderr)
  assert.equal(result.code, options.code ?? 0, `${args.join(' ')}\n${result.stdout}\n${result.stderr}`)
  return result
}
const json = async (args: string[], options: {code?: number} = {}) => jsonResult((await bq([...args, '--json'], options)).stdout)

/** The SDK's dead letters, the first three framed with a traceparent as a header-keeping DLQ holds them. */
const framedDlq = () => pythonSdk.dlq.map((value, i) => (i < 3 ? writeFrame(Buffer.from(value), {traceparent: TRACEPARENT}).toString() : value))

describe('reading what the Python SDK stored', () => {
  test('peek shows frames as their envelopes: table, --json, --headers, --jsonl, --raw; validate accepts both exports', async (t) => {
    if (!(await available(t))) return
    const q = queue('peek')
    await redis().rpush(q, ...pythonSdk.published)
    const table = await bq(['peek', q, '-b', url])
    for (const id of ['9e1dfbc4-4f91-4eb6-b931-383fccb19926', 'c72377c4-8d2f-4274-8a07-aa0e59b58959']) assert.match(table.stdout, new RegExp(id))
    assert.doesNotMatch(table.stdout, /poison/)

    const peek = await json(['peek', q, '-b', url, '--headers'])
    const messages = peek.messages as Array<{body: string; valid: boolean; poison: string | null; headers: Record<string, string>; size: number}>
    assert.deepEqual(
      messages.map((m) => m.body),
      pythonSdk.published.map((value, i) => (i < 3 ? bodyOf(value) : value)),
    )
    assert.ok(messages.every((m) => m.valid && m.poison === null))
    assert.deepEqual(
      messages.map((m) => m.headers),
      [{traceparent: TRACEPARENT}, {traceparent: TRACEPARENT}, {traceparent: TRACEPARENT}, {}],
    )
    assert.equal(messages[0].size, Buffer.byteLength(bodyOf(pythonSdk.published[0])), 'size is the envelope inside')

    const jsonl = (await bq(['peek', q, '-b', url, '--jsonl'])).stdout
    assert.equal(jsonl, messages.map((m) => m.body).join('\n') + '\n')
    const raw = (await bq(['peek', q, '-b', url, '--raw'])).stdout
    assert.equal(raw, pythonSdk.published.join('\n') + '\n', '--raw is the stored value, frame and all')

    for (const [name, text] of [['envelopes.jsonl', jsonl], ['stored.jsonl', raw]]) {
      const file = path.join(dir, name)
      writeFileSync(file, text)
      const check = await json(['validate', file])
      // The three warnings are the samples' own: data.n is beyond 2^53 − 1.
      assert.deepEqual(check.summary, {inputs: 1, messages: 4, valid: 4, invalid: 0, errors: 0, warnings: 3}, name)
    }
    assert.deepEqual(await stored(q), pythonSdk.published, 'reading changed nothing')
  })

  test('dlq inspect groups framed dead letters with the bare ones, no poison; a broken frame is poison with its reason', async (t) => {
    if (!(await available(t))) return
    const q = queue('inspect')
    await redis().rpush(`${q}.dlq`, ...framedDlq())
    const inspect = await json(['dlq', 'inspect', q, '-b', url])
    const groups = inspect.groups as Array<{poison: boolean; count: number; key: Record<string, string>}>
    assert.deepEqual(
      groups.map((g) => [g.poison, g.count, g.key.exception]),
      [[false, 4, 'TimeoutError']],
    )
    await redis().rpush(`${q}.dlq`, '{"__bq_frame":1,"headers":{"traceparent":7},"body":"{}"}')
    const peek = await json(['peek', `${q}.dlq`, '-b', url])
    assert.deepEqual(
      (peek.messages as Array<{poison: string | null}>).map((m) => m.poison),
      [null, null, null, null, 'not an envelope: a __bq_frame frame whose header "traceparent" is not a string'],
    )
    const again = await json(['dlq', 'inspect', q, '-b', url])
    assert.deepEqual(
      (again.groups as Array<{poison: boolean; count: number}>).map((g) => [g.poison, g.count]),
      [
        [false, 4],
        [true, 1],
      ],
    )
  })
})

describe('writing what the SDK consumers read', () => {
  test('redrive keeps a frame and its traceparent, leaves bare values bare, and never moves a broken frame', async (t) => {
    if (!(await available(t))) return
    const q = queue('redrive')
    const broken = '{"__bq_frame":1,"headers":{}}'
    await redis().rpush(`${q}.dlq`, ...framedDlq(), broken)
    const report = await json(['dlq', 'redrive', q, '--to', `${q}.sandbox`, '--yes', '-b', url], {code: 0})
    assert.deepEqual(report.counts, {examined: 5, redriven: 4, would_redrive: 0, skipped: 0, poison: 1, failed: 0})
    const reset = pythonSdk.dlq.map((value) => resetForRedriveBytes(decodeEnvelope(value)).toString())
    assert.deepEqual(await stored(`${q}.sandbox`), [
      ...reset.slice(0, 3).map((body) => `{"__bq_frame":1,"headers":{"traceparent":"${TRACEPARENT}"},"body":${JSON.stringify(body)}}`),
      reset[3],
    ])
    // The reset copies are the SDK's own publishes again, attempts 0, headers and all.
    assert.deepEqual((await stored(`${q}.sandbox`)).slice(0, 3), pythonSdk.published.slice(0, 3))
    assert.deepEqual(await stored(`${q}.dlq`), [broken], 'the broken frame stays, untouched')
  })

  test("--bypass writes exactly the SDK's own redrive-with-bypass frame, and adds the marker to a framed message's headers", async (t) => {
    if (!(await available(t))) return
    const q = queue('bypass')
    await redis().rpush(`${q}.dlq`, ...pythonRedriveBypass.dlq_before)
    const result = await bq(['dlq', 'redrive', q, '--to', `${q}.sandbox`, '--bypass', '--yes', '-b', url])
    assert.doesNotMatch(result.stderr, /no-op|warn/i)
    assert.deepEqual(await stored(`${q}.sandbox`), pythonRedriveBypass.after_python_redrive_bypass_to_sandbox)

    await redis().rpush(`${q}.dlq`, framedDlq()[0])
    await bq(['dlq', 'redrive', q, '--to', `${q}.traced`, '--bypass', '--yes', '-b', url])
    const [traced] = await stored(`${q}.traced`)
    const frame = readFrame(traced)
    assert.equal(frame.kind, 'frame')
    assert.deepEqual(frame.kind === 'frame' && frame.headers, {traceparent: TRACEPARENT, 'bq-replay-bypass': '1'})

    // A peek shows the marker; a redrive of the marked copy without --bypass drops it again.
    const peek = await json(['peek', `${q}.sandbox`, '-b', url, '--headers'])
    assert.deepEqual((peek.messages as Array<{headers: unknown}>)[0].headers, {'bq-replay-bypass': '1'})
    await redis().rename(`${q}.sandbox`, `${q}.again.dlq`)
    await bq(['dlq', 'redrive', `${q}.again`, '--to', `${q}.plain`, '--yes', '-b', url])
    assert.deepEqual(await stored(`${q}.plain`), [bodyOf(pythonRedriveBypass.after_python_redrive_bypass_to_sandbox[0])])
  })

  test('replay of a --jsonl export: bare without --bypass, the SDK frame with it; a --with-headers or --raw export restores the traceparent', async (t) => {
    if (!(await available(t))) return
    const q = queue('replay')
    await redis().rpush(`${q}.dlq`, ...framedDlq())
    const file = path.join(dir, `${q}.jsonl`)
    writeFileSync(file, (await bq(['peek', `${q}.dlq`, '-b', url, '--jsonl'])).stdout)
    const reset = pythonSdk.dlq.map((value) => resetForRedriveBytes(decodeEnvelope(value)).toString())
    await bq(['replay', file, '--to', `${q}.a`, '--yes', '-b', url])
    assert.deepEqual(await stored(`${q}.a`), reset)
    await bq(['replay', file, '--to', `${q}.b`, '--bypass', '--yes', '-b', url])
    assert.deepEqual(
      await stored(`${q}.b`),
      reset.map((body) => `{"__bq_frame":1,"headers":{"bq-replay-bypass":"1"},"body":${JSON.stringify(body)}}`),
    )
    const withHeaders = path.join(dir, `${q}.headers.jsonl`)
    writeFileSync(withHeaders, (await bq(['peek', `${q}.dlq`, '-b', url, '--jsonl', '--with-headers'])).stdout)
    await bq(['replay', withHeaders, '--to', `${q}.c`, '--yes', '-b', url])
    assert.deepEqual(await stored(`${q}.c`), [...pythonSdk.published.slice(0, 3), reset[3]])
    // A --raw export holds the frames themselves: replay reads the envelope and headers inside.
    const rawExport = path.join(dir, `${q}.raw.jsonl`)
    writeFileSync(rawExport, (await bq(['peek', `${q}.dlq`, '-b', url, '--raw'])).stdout)
    await bq(['replay', rawExport, '--to', `${q}.d`, '--yes', '-b', url])
    assert.deepEqual(await stored(`${q}.d`), [...pythonSdk.published.slice(0, 3), reset[3]])
    assert.equal(await redis().llen(`${q}.dlq`), 4, 'replay only reads its file')
  })
})

describe("Laravel's notify list (?prefix=queues:)", () => {
  const laravel = `${url}?prefix=queues:`
  const ones = (n: number) => Array.from({length: n}, () => '1')

  test('publish and replay add one wake-up entry per message; notify=off adds none', async (t) => {
    if (!(await available(t))) return
    const q = queue('notify-pub')
    await bq(['publish', 'urn:babel:orders:created', '-d', '{"order_id":1}', '--count', '3', '-q', q, '-b', laravel])
    assert.equal(await redis().llen(`queues:${q}`), 3)
    assert.deepEqual(await stored(`queues:${q}:notify`), ones(3))
    const file = path.join(dir, `${q}.jsonl`)
    writeFileSync(file, pythonSdk.dlq.join('\n') + '\n')
    await bq(['replay', file, '--to', q, '--bypass', '--yes', '-b', laravel])
    assert.deepEqual(await stored(`queues:${q}:notify`), ones(7))
    await bq(['publish', 'urn:babel:orders:created', '-d', '{"order_id":1}', '-q', `${q}.quiet`, '-b', `${laravel}&notify=off`])
    assert.equal(await redis().exists(`queues:${q}.quiet:notify`), 0)
    await bq(['publish', 'urn:babel:orders:created', '-d', '{"order_id":1}', '-q', `${q}.plain`, '-b', url])
    assert.equal(await redis().exists(`${q}.plain:notify`), 0, 'no notify list without the Laravel prefix')
  })

  test('a redrive pops the DLQ notify per message taken and pushes the target notify per message added, in step', async (t) => {
    if (!(await available(t))) return
    const q = queue('notify-move')
    const dlq = `queues:${q}.dlq`
    await redis().rpush(dlq, ...framedDlq())
    await redis().rpush(`${dlq}:notify`, ...ones(4))
    const report = await json(['dlq', 'redrive', q, '--to', q, '--max', '3', '--yes', '-b', laravel])
    assert.equal((report.counts as {redriven: number}).redriven, 3)
    assert.equal(await redis().llen(dlq), 1)
    assert.deepEqual(await stored(`${dlq}:notify`), ones(1))
    assert.deepEqual(await stored(`queues:${q}`), pythonSdk.published.slice(0, 3))
    assert.deepEqual(await stored(`queues:${q}:notify`), ones(3))
    // A message a run takes and leaves (not selected) comes back with its wake-up entry.
    const skipped = await json(['dlq', 'redrive', q, '--to', q, '--select', 'reason=timeout', '--yes', '-b', laravel])
    assert.equal((skipped.counts as {skipped: number}).skipped, 1)
    assert.equal(await redis().llen(dlq), 1)
    assert.deepEqual(await stored(`${dlq}:notify`), ones(1))
    assert.equal(await redis().llen(`queues:${q}:notify`), 3)
  })

  test('a crashed drain took wake-up entries with its messages; recover returns both', async (t) => {
    if (!(await available(t))) return
    const q = queue('notify-crash')
    const key = `queues:${q}`
    await redis().rpush(key, ...pythonSdk.published)
    await redis().rpush(`${key}:notify`, ...ones(4))
    await runFixture('crash-drain.ts', [laravel, q, '3', '1'])
    assert.equal(await redis().llen(key), 1)
    assert.deepEqual(await stored(`${key}:notify`), ones(1))
    const recovered = await json(['dlq', 'recover', q, '--dlq', q, '-b', laravel])
    assert.equal(recovered.recovered, 3)
    assert.deepEqual(await stored(key), pythonSdk.published, 'back in their original order, frames untouched')
    assert.deepEqual(await stored(`${key}:notify`), ones(4))
  })
})
