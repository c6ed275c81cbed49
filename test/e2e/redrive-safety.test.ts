// @test-uses rabbitmq redis
/**
 * Redrive and replay safety, through the built bin/run.js against real brokers:
 * - a redrive never moves a DLQ into itself (refused up front for `--to <the DLQ>`, and per
 *   message when a message's own target is the DLQ being drained): nothing loses its dead_letter;
 * - JSON bodies that are not envelopes (`{}`, another system's JSON) are poison: left in place byte
 *   for byte by redrive, refused by replay, their own group in inspect;
 * - a message above the redrive maximum stays in place and is reported, the run goes on;
 * - Redis: a database out of range is a usage error; a server that never answers ends in exit 4
 *   within the connect or command bound instead of hanging;
 * - the embedded store: an explicit path whose directory does not exist is an error, and only
 *   the default store's directory is created.
 */
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {createServer, type Server, type Socket} from 'node:net'
import {tmpdir} from 'node:os'
import path from 'node:path'

import Database from 'better-sqlite3'

import {amqpUrl, redisUrl} from '../suites/command-suite.js'
import {requireBroker, uniqueQueue} from '../support/brokers.js'
import {hasStackTrace, jsonOutput, jsonResult, runBq} from '../support/cli.js'
import {repoRoot} from '../support/conformance.js'

const exampleLines = readFileSync(path.join(repoRoot, 'examples', 'orders.dlq.jsonl'), 'utf8').trim().split('\n')
let dir: string
let sqliteUrl: string
/** Keeps the default embedded store inside the temp dir. */
let env: NodeJS.ProcessEnv

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-safety-'))
  sqliteUrl = `sqlite://${path.join(dir, 'q.db')}`
  env = {XDG_DATA_HOME: dir, BQ_BROKER: ''}
})
after(() => rmSync(dir, {recursive: true, force: true}))

interface Target {
  name: string
  url: () => string
  available: (t: TestContext) => Promise<boolean>
}

const targets: Target[] = [
  {name: 'embedded sqlite', url: () => sqliteUrl, available: async () => true},
  {name: 'redis', url: () => redisUrl, available: (t) => requireBroker(t, 'Redis', new URL(redisUrl).hostname, Number(new URL(redisUrl).port || 6379))},
  {name: 'rabbitmq', url: () => amqpUrl, available: (t) => requireBroker(t, 'RabbitMQ', new URL(amqpUrl).hostname, Number(new URL(amqpUrl).port || 5672))},
]

function bq(args: string[], options: {timeoutMs?: number} = {}) {
  return runBq(args, {env, ...options})
}

/** Puts `lines` on `queue` exactly as they are (replay --as-is). */
async function seed(url: string, queue: string, lines: string[]): Promise<void> {
  const file = path.join(dir, `${queue}.jsonl`)
  writeFileSync(file, lines.join('\n') + '\n')
  const seeded = await bq(['replay', file, '--as-is', '--to', queue, '--yes', '-b', url])
  assert.equal(seeded.code, 0, seeded.stderr)
}

/** Every body on a queue, exactly as stored, in order. */
async function bodies(url: string, queue: string): Promise<string[]> {
  const peek = await bq(['peek', queue, '-b', url, '--limit', '1000', '--json'])
  assert.equal(peek.code, 0, peek.stderr)
  const messages = jsonResult(peek.stdout).messages as Array<{body: string; body_encoding: string}>
  return messages.map((m) => (m.body_encoding === 'base64' ? Buffer.from(m.body, 'base64').toString('utf8') : m.body))
}

/** The example dead letters, their original queue renamed. */
function deadLetters(originalQueue: string): string[] {
  return exampleLines.map((line) => line.replaceAll('"original_queue":"orders"', `"original_queue":${JSON.stringify(originalQueue)}`))
}

function oneLine(stderr: string): void {
  assert.ok(!hasStackTrace(stderr), stderr)
  assert.equal(stderr.trimEnd().split('\n').length, 1, stderr)
}

describe('a redrive never moves a DLQ into itself', () => {
  for (const target of targets) {
    test(`${target.name}: --to <the DLQ being redriven> is refused up front (exit 2), dry run or not; nothing changes`, async (t) => {
      if (!(await target.available(t))) return
      const queue = uniqueQueue('self-to')
      const dlq = `${queue}.dlq`
      await seed(target.url(), dlq, deadLetters(queue))
      const before = await bodies(target.url(), dlq)
      for (const extra of [['--yes'], ['--dry-run'], ['--yes', '--json']]) {
        const run = await bq(['dlq', 'redrive', queue, '--to', dlq, '-b', target.url(), ...extra])
        assert.equal(run.code, 2, `${extra.join(' ')}: ${run.stdout}${run.stderr}`)
        if (extra.includes('--json')) {
          const output = jsonOutput(run.stdout)
          assert.equal(!output.ok && output.error.code, 'usage')
          assert.match(!output.ok ? output.error.message : '', /is the dead-letter queue being redriven/)
        } else {
          oneLine(run.stderr)
          assert.match(run.stderr, new RegExp(`--to ${dlq.replaceAll('.', '\\.')} is the dead-letter queue being redriven`))
        }
      }
      assert.deepEqual(await bodies(target.url(), dlq), before, 'every dead_letter block is still there')
    })

    test(`${target.name}: a message whose own target is the DLQ stays in place, reported failed (exit 3); the others move`, async (t) => {
      if (!(await target.available(t))) return
      const queue = uniqueQueue('self-orig')
      const dlq = `${queue}.dlq`
      const intoItself = deadLetters(dlq)
      // meta.queue names the DLQ and there is no dead_letter block: its target is the DLQ too.
      const metaQueue = '{"job":"urn:babel:orders:created","trace_id":"0b6c3f1e-2d4a-4e8b-9c1d-3e5f7a9b1c2d","data":{},"meta":{"id":"5b2f9c2e-7b3d-4e6a-8f10-2c4d6e8fa009","queue":' + JSON.stringify(dlq) + ',"lang":"php","schema_version":1,"created_at":1764489600000},"attempts":2}'
      const fine = deadLetters(queue)[0]
      await seed(target.url(), dlq, [intoItself[0], metaQueue, fine, intoItself[1]])
      const before = await bodies(target.url(), dlq)

      const dry = await bq(['dlq', 'redrive', queue, '--dry-run', '--json', '-b', target.url()])
      assert.equal(dry.code, 3, dry.stdout)
      assert.deepEqual(jsonResult(dry.stdout).counts, {examined: 4, redriven: 0, would_redrive: 1, skipped: 0, poison: 0, failed: 3})

      const run = await bq(['dlq', 'redrive', queue, '--yes', '--json', '-b', target.url()])
      assert.equal(run.code, 3, run.stdout)
      const report = jsonResult(run.stdout)
      assert.deepEqual(report.counts, {examined: 4, redriven: 1, would_redrive: 0, skipped: 0, poison: 0, failed: 3})
      const failed = (report.items as Array<{outcome: string; target: string | null; error?: string}>).filter((item) => item.outcome === 'failed')
      assert.equal(failed.length, 3)
      for (const item of failed) {
        assert.equal(item.target, dlq)
        assert.match(item.error ?? '', /is the dead-letter queue being redriven.*left in place/)
      }
      // The three stay on the DLQ byte for byte (dead_letter blocks and all), in their order.
      assert.deepEqual(await bodies(target.url(), dlq), [before[0], before[1], before[3]])
      assert.equal((await bodies(target.url(), queue)).length, 1)
    })
  }
})

describe('JSON bodies that are not envelopes are poison', () => {
  // Objects without a URN or without a meta object, beside one real dead letter.
  const notEnvelopes = ['{}', '{"a":1,"meta":{"queue":"elsewhere"}}', '{"job":"urn:babel:orders:created","data":{},"attempts":1}', '{"job":"","meta":{"queue":"x"}}', '{"job":"urn:babel:orders:created","meta":"x"}']
  for (const target of targets.slice(0, 2)) {
    test(`${target.name}: redrive leaves them in place byte for byte, inspect groups them as poison, replay refuses them`, async (t) => {
      if (!(await target.available(t))) return
      const queue = uniqueQueue('not-envelope')
      const dlq = `${queue}.dlq`
      const real = deadLetters(queue)[0]
      await seed(target.url(), dlq, [...notEnvelopes, real])
      const before = await bodies(target.url(), dlq)

      const inspect = await bq(['dlq', 'inspect', queue, '--json', '-b', target.url()])
      assert.equal(inspect.code, 0, inspect.stdout)
      const groups = jsonResult(inspect.stdout).groups as Array<{poison: boolean; count: number}>
      assert.deepEqual(groups.map((g) => [g.poison, g.count]), [[true, notEnvelopes.length], [false, 1]])

      const run = await bq(['dlq', 'redrive', queue, '--yes', '--json', '-b', target.url()])
      assert.equal(run.code, 0, run.stdout)
      const report = jsonResult(run.stdout)
      assert.deepEqual(report.counts, {examined: 6, redriven: 1, would_redrive: 0, skipped: 0, poison: notEnvelopes.length, failed: 0})
      for (const item of (report.items as Array<{outcome: string; error?: string}>).filter((i) => i.outcome === 'poison')) assert.match(item.error ?? '', /not an envelope/)
      assert.deepEqual(await bodies(target.url(), dlq), before.slice(0, notEnvelopes.length), 'poison stays exactly as it was')
      assert.deepEqual((await bodies(target.url(), queue)).length, 1)
      // Nothing went where the non-envelopes' meta.queue points.
      assert.equal((await bq(['peek', 'elsewhere', '-b', target.url(), '--json'])).code === 0 ? jsonResult((await bq(['peek', 'elsewhere', '-b', target.url(), '--json'])).stdout).depth : 0, 0)

      const file = path.join(dir, `${queue}.replay.jsonl`)
      writeFileSync(file, [...notEnvelopes, real].join('\n') + '\n')
      const replayed = await bq(['replay', file, '--to', `${queue}.sandbox`, '--yes', '--json', '-b', target.url()])
      assert.equal(replayed.code, 0, replayed.stdout)
      assert.deepEqual(jsonResult(replayed.stdout).counts, {examined: 6, redriven: 1, would_redrive: 0, skipped: 0, poison: notEnvelopes.length, failed: 0})
      assert.deepEqual((await bodies(target.url(), `${queue}.sandbox`)).length, 1)
    })
  }
})

describe('message size', () => {
  test('embedded sqlite: a message above the redrive maximum (128 MiB) stays in place and is reported failed; the rest move (exit 3)', async () => {
    const queue = uniqueQueue('huge')
    const dlq = `${queue}.dlq`
    const real = deadLetters(queue)
    await seed(sqliteUrl, dlq, [real[0]])
    // A valid dead-lettered envelope of 129 MiB, put on the DLQ directly (bq's file reader takes 16 MiB at most).
    const head = real[1].slice(0, real[1].indexOf('"data":') + '"data":'.length)
    const tail = real[1].slice(real[1].indexOf(',"meta":'))
    const huge = Buffer.from(`${head}{"blob":"${'x'.repeat(129 * 1024 * 1024)}"}${tail}`)
    const db = new Database(path.join(dir, 'q.db'))
    try {
      db.prepare('INSERT INTO messages (queue, body, headers, enqueued_at, available_at) VALUES (?, ?, ?, ?, ?)').run(dlq, huge, '{}', Date.now(), 0)
    } finally {
      db.close()
    }
    const run = await bq(['dlq', 'redrive', queue, '--yes', '--json', '-b', sqliteUrl], {timeoutMs: 120_000})
    assert.equal(run.code, 3, run.stdout + run.stderr)
    const report = jsonResult(run.stdout)
    assert.deepEqual(report.counts, {examined: 2, redriven: 1, would_redrive: 0, skipped: 0, poison: 0, failed: 1})
    const failed = (report.items as Array<{outcome: string; error?: string}>).find((item) => item.outcome === 'failed')
    assert.match(failed?.error ?? '', /129\.0 MiB, larger than bq's largest movable message \(128\.0 MiB\): left in place/)
    const check = new Database(path.join(dir, 'q.db'), {readonly: true})
    try {
      const left = check.prepare('SELECT length(body) AS n FROM messages WHERE queue = ?').all(dlq) as Array<{n: number}>
      assert.deepEqual(left.map((row) => row.n), [huge.length])
    } finally {
      check.close()
    }
  })
})

/** A TCP server that accepts connections and never answers; or, with `handshake`, answers Redis's connection handshake and nothing after it. */
async function silentServer(handshake = false): Promise<{port: number; close: () => Promise<void>}> {
  const sockets = new Set<Socket>()
  const server: Server = createServer((socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => undefined)
    if (!handshake) return
    let pending = Buffer.alloc(0)
    socket.on('data', (chunk: Buffer) => {
      pending = Buffer.concat([pending, chunk])
      for (;;) {
        const parsed = parseCommand(pending)
        if (parsed === undefined) return
        pending = pending.subarray(parsed.length)
        const name = parsed.args[0]?.toLowerCase()
        if (name === 'client' || name === 'select') socket.write('+OK\r\n')
        else if (name === 'info') {
          const info = '# Server\r\nredis_version:7.0.0\r\nloading:0\r\n'
          socket.write(`$${Buffer.byteLength(info)}\r\n${info}\r\n`)
        }
        // Anything else: no answer, ever.
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as {port: number}).port
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}

/** One RESP command (an array of bulk strings) from the start of `buffer`, or undefined when incomplete. */
function parseCommand(buffer: Buffer): {args: string[]; length: number} | undefined {
  const line = (from: number) => {
    const end = buffer.indexOf('\r\n', from)
    return end === -1 ? undefined : {text: buffer.subarray(from, end).toString(), next: end + 2}
  }
  const head = line(0)
  if (head === undefined) return undefined
  if (!head.text.startsWith('*')) return {args: head.text.split(' '), length: head.next}
  const args: string[] = []
  let at = head.next
  for (let i = 0; i < Number(head.text.slice(1)); i++) {
    const size = line(at)
    if (size === undefined) return undefined
    const n = Number(size.text.slice(1))
    if (buffer.length < size.next + n + 2) return undefined
    args.push(buffer.subarray(size.next, size.next + n).toString())
    at = size.next + n + 2
  }
  return {args, length: at}
}

describe('redis: connection problems end in a one-line error', () => {
  test('a database out of range is a usage error (exit 2) naming the URL', async (t) => {
    const url = new URL(redisUrl)
    if (!(await requireBroker(t, 'Redis', url.hostname, Number(url.port || 6379)))) return
    const bad = `redis://${url.host}/99`
    for (const args of [['peek', 'orders'], ['dlq', 'inspect', 'orders'], ['publish', 'urn:babel:orders:created', '-d', '{}', '-q', 'orders']]) {
      const run = await bq([...args, '-b', bad])
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`)
      oneLine(run.stderr)
      assert.match(run.stderr, new RegExp(`database 99 does not exist on redis://${url.host.replaceAll('.', '\\.')}/99`))
    }
  })

  test('a server that accepts connections and never answers: exit 4 within the connect bound (10 s), naming the broker', {timeout: 60_000}, async () => {
    const server = await silentServer()
    try {
      const url = `redis://127.0.0.1:${server.port}`
      for (const args of [['peek', 'orders'], ['dlq', 'redrive', 'orders', '--yes']]) {
        const run = await bq([...args, '-b', url], {timeoutMs: 25_000})
        assert.equal(run.code, 4, `${args.join(' ')}: ${run.stderr}`)
        oneLine(run.stderr)
        assert.match(run.stderr, new RegExp(`cannot connect to redis://127\\.0\\.0\\.1:${server.port}: no answer within 10 s`))
      }
    } finally {
      await server.close()
    }
  })

  test('a server that stops answering after the handshake: exit 4 once a command waits past ?timeout=SECONDS', {timeout: 60_000}, async () => {
    const server = await silentServer(true)
    try {
      const url = `redis://127.0.0.1:${server.port}?timeout=1`
      for (const args of [['peek', 'orders'], ['dlq', 'redrive', 'orders', '--yes'], ['publish', 'urn:babel:orders:created', '-d', '{}', '-q', 'orders']]) {
        const run = await bq([...args, '-b', url], {timeoutMs: 25_000})
        assert.equal(run.code, 4, `${args.join(' ')}: ${run.stderr}`)
        oneLine(run.stderr)
        assert.match(run.stderr, new RegExp(`redis://127\\.0\\.0\\.1:${server.port}/?\\?timeout=1 did not answer within 1 s`))
      }
    } finally {
      await server.close()
    }
  })
})

describe('embedded store paths', () => {
  test('an explicit sqlite:// path whose directory does not exist is a one-line error (exit 4); nothing is created', async () => {
    const missing = path.join(dir, 'nonexistent', 'dir')
    for (const args of [['peek', 'orders'], ['publish', 'urn:babel:orders:created', '-d', '{}', '-q', 'orders']]) {
      const run = await bq([...args, '-b', `sqlite://${path.join(missing, 'q.db')}`])
      assert.equal(run.code, 4, `${args.join(' ')}: ${run.stderr}`)
      oneLine(run.stderr)
      assert.match(run.stderr, /the directory .*nonexistent\/dir does not exist/)
    }
    assert.equal(existsSync(path.join(dir, 'nonexistent')), false)
  })

  test('the default store location ($XDG_DATA_HOME/bq/queues.db) is still created', async () => {
    const xdg = path.join(dir, 'fresh-xdg')
    const run = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', 'orders'], {env: {XDG_DATA_HOME: xdg, BQ_BROKER: ''}})
    assert.equal(run.code, 0, run.stderr)
    assert.ok(existsSync(path.join(xdg, 'bq', 'queues.db')))
  })
})
