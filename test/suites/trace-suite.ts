/**
 * The trace suite: `bq trace` through bin/run.js against one real broker. One trace is spread over
 * a queue, its DLQ, the queue's in-flight list (where the broker lets bq read one) and a second
 * context; trace must find it whole by trace_id, by OpenTelemetry TraceID and by meta.id, change
 * nothing it reads, name what it could not read, and exit 1 in one line for an id that is nowhere.
 * Each broker's trace.test.ts calls traceSuite with how its consumers hold work and how to take a
 * snapshot of a queue that a read with side effects would change.
 */
import assert from 'node:assert/strict'
import {randomUUID} from 'node:crypto'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, describe, test} from 'node:test'
import type {TestContext} from 'node:test'

import {make} from '../../src/lib/envelope/index.js'
import {otelTraceIdOf} from '../../src/lib/ops/trace-id.js'
import {uniqueQueue} from '../support/brokers.js'
import {hasStackTrace, jsonOutput, runBq} from '../support/cli.js'

export interface HeldWork {
  /** Finish what hold() took so nothing stays in flight. */
  release(): Promise<void>
}

export interface TraceCase {
  name: string
  /** The broker of context `a`, and that of context `b` (another database or prefix of the same kind; default: an embedded store of the suite's own). */
  url: () => string
  secondUrl?: () => string
  available: (t: TestContext) => Promise<boolean>
  /** Takes the first `count` messages of `queue` as this broker's consumers do and leaves them unfinished; absent where no in-flight list is readable. */
  hold?: (queue: string, count: number) => Promise<HeldWork>
  /**
   * Where hold() puts them, as trace reports it (`processing`, `reserved`). Absent with a hold:
   * the broker shows in-flight messages as counts only, so the held copy cannot be found and
   * trace must name the queue as holding messages it could not see.
   */
  heldPlace?: string
  /** Everything about these queues a read with side effects would change: contents, order, delivery counters. */
  snapshot: (queues: string[]) => Promise<unknown>
  /** Reads here cost a delivery (no true peek): trace names the queues and reads nothing without --accept-delivery-cost. */
  readsCost?: boolean
  /** The DLQ of a queue by this broker's naming (default `<queue>.dlq`; SQS names have no dots: `<queue>-dlq`). */
  dlqOf?: (queue: string) => string
  /**
   * The broker's URL cannot be a context (a Service Bus connection string has no place for a
   * password reference): the suite reads it with -b beside context b instead of as context a.
   */
  contextless?: boolean
  /** The broker cannot list its queues (bq's Service Bus test server): the suite names them with --queue instead of a glob. */
  unlistable?: boolean
  /** Creates the queues before anything is published, where a queue exists apart from its messages and publishing does not create it. */
  prepare?: (queues: string[]) => Promise<void>
}

interface Sighting {
  context: string | null
  queue: string
  state: string
  place: string | null
  id: string
  trace_id: string
  attempts: number | null
  matched_by: string
  dead_letter: {reason?: string; exception?: string} | null
}

interface TraceJson {
  sightings: Sighting[]
  unread: Array<{context: string | null; queue: string; why: string}>
  cut_short: Array<{queue: string; why: string}>
  runs: Array<{id: string; ids: Record<string, string[]>}>
}

async function publish(url: string, queue: string, count: number, traceId?: string): Promise<string[]> {
  const args = ['publish', 'urn:babel:orders:created', '-d', '{"order_id":1042}', '-q', queue, '--count', String(count), '-b', url, ...(traceId === undefined ? [] : ['--trace-id', traceId])]
  const published = await runBq(args)
  assert.equal(published.code, 0, published.stderr)
  return published.stdout.trim().split('\n')
}

/** A dead-lettered envelope of the trace, replayed byte for byte into the DLQ (`bq replay --as-is`). */
async function publishDead(url: string, dlq: string, queue: string, traceId: string, dir: string): Promise<string> {
  const envelope = make('urn:babel:orders:created', '{"order_id":1042}', {queue, traceId})
  const text = envelope.text.replace(/"attempts":0\}$/, `"attempts":3,"dead_letter":{"reason":"handler_error","error":"card declined","exception":"PaymentError","failed_at":${Date.now()},"original_queue":"${queue}","attempts":3,"lang":"node"}}`)
  const file = path.join(dir, `${dlq}.jsonl`)
  writeFileSync(file, `${text}\n`)
  const replayed = await runBq(['replay', file, '--as-is', '--to', dlq, '-y', '-b', url])
  assert.equal(replayed.code, 0, replayed.stderr)
  return envelope.id as string
}

/** Runs the steps one after another (reads that take messages must not overlap). */
async function inTurn<T>(steps: Array<() => Promise<T>>): Promise<T[]> {
  const results: T[] = []
  for (const step of steps) results.push(await step())
  return results
}

/** A URL without its password, and the password (URL-decoded), when it has one. */
function withoutPassword(url: string): {bare: string; password?: string} {
  const match = /^([a-z0-9+.-]+:\/\/[^:/?#@]*):([^@/?#]*)@/i.exec(url)
  if (match === null) return {bare: url}
  return {bare: url.replace(`${match[1]}:${match[2]}@`, `${match[1]}@`), password: decodeURIComponent(match[2])}
}

export function traceSuite(broker: TraceCase): void {
  describe(`bq trace on ${broker.name}`, () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'bq-trace-'))
    after(() => rmSync(dir, {recursive: true, force: true}))
    // Contexts keep no password: a URL's travels in an environment variable (--password-env).
    const env: Record<string, string> = {XDG_CONFIG_HOME: dir}
    const secondUrl = broker.secondUrl ?? (() => `sqlite://${path.join(dir, 'second.db')}`)
    let contexts: Promise<void> | undefined
    const defineContexts = () =>
      (contexts ??= (async () => {
        for (const [name, url, extra] of [['a', broker.url(), []], ['b', secondUrl(), ['--protected']]] as const) {
          if (name === 'a' && broker.contextless) continue
          const {bare, password} = withoutPassword(url)
          if (password !== undefined) env[`BQ_TRACE_TEST_PASSWORD_${name.toUpperCase()}`] = password
          const secret = password === undefined ? [] : ['--password-env', `BQ_TRACE_TEST_PASSWORD_${name.toUpperCase()}`]
          const added = await runBq(['context', 'add', name, '-b', bare, ...secret, ...extra], {env})
          assert.equal(added.code, 0, added.stderr)
        }
      })())
    // The broker under test: context a, or its URL beside the contexts (contextless).
    const underTest = () => (broker.contextless ? ['-b', broker.url()] : ['--context', 'a'])
    // Where to look: the test's queues by a glob (the broker lists them), or by name.
    const queues = (...names: string[]) => (broker.unlistable ? names.flatMap((name) => ['--queue', name]) : ['--queue', `${names[0]}*`])
    const trace = async (args: string[]) => {
      const run = await runBq(['trace', ...args], {env, timeoutMs: 60_000})
      assert.ok(!hasStackTrace(run.stderr), run.stderr)
      return run
    }

    test('one trace over a queue, its DLQ, an in-flight list and a second context is found whole by trace_id, TraceID and meta.id; nothing changes', async (t) => {
      if (!(await broker.available(t))) return
      await defineContexts()
      const traceId = randomUUID()
      const queue = uniqueQueue('trace')
      const dlq = broker.dlqOf?.(queue) ?? `${queue}.dlq`
      await broker.prepare?.([queue, dlq])
      // The trace's first message goes first, so hold() takes it into the in-flight list.
      const first = await publish(broker.url(), queue, 1, traceId)
      await publish(broker.url(), queue, 3)
      // Each its own queue (or broker): published at once, to keep the file's wall time down.
      const [second, dead, elsewhere] = await Promise.all([publish(broker.url(), queue, 1, traceId), publishDead(broker.url(), dlq, queue, traceId, dir), publish(secondUrl(), queue, 1, traceId)])
      const held = broker.hold === undefined ? undefined : await broker.hold(queue, 1)
      try {
        const before = await broker.snapshot([queue, dlq])
        const unseenHeld = held !== undefined && broker.heldPlace === undefined
        const expected = new Map<string, string>([
          [second[0], 'waiting'],
          [dead, 'dead'],
          [elsewhere[0], 'waiting'],
        ])
        if (!unseenHeld) expected.set(first[0], held === undefined ? 'waiting' : 'in flight')
        const consent = broker.readsCost ? ['--accept-delivery-cost'] : []
        const scope = [...underTest(), '--context', 'b', ...queues(queue, dlq), ...consent]
        // Free reads run at once; reads that take and return messages (consent) one after another.
        const runs = [[traceId.toUpperCase(), '--json'], [otelTraceIdOf(traceId), '--json'], [dead, '--json'], [traceId, '--jsonl'], [traceId]]
        const [upper, otel, byId, lines, table] = broker.readsCost ? await inTurn(runs.map((args) => () => trace([...args, ...scope]))) : await Promise.all(runs.map((args) => trace([...args, ...scope])))
        for (const [id, run] of [[traceId.toUpperCase(), upper], [otelTraceIdOf(traceId), otel]] as const) {
          assert.equal(run.code, 0, run.stderr)
          const result = jsonOutput(run.stdout).result as unknown as TraceJson
          const found = new Map(result.sightings.map((s) => [s.id, s]))
          assert.deepEqual([...found.keys()].sort(), [...expected.keys()].sort(), `${id}: ${JSON.stringify(result.sightings)}`)
          for (const [messageId, state] of expected) assert.equal(found.get(messageId)?.state, state, `${messageId} is ${state}`)
          if (held !== undefined && !unseenHeld) assert.equal(found.get(first[0])?.place, broker.heldPlace)
          if (unseenHeld) assert.ok(result.unread.some((u) => u.queue === queue && /counts only/.test(u.why)), `the held copy is named as unseen: ${JSON.stringify(result.unread)}`)
          assert.equal(found.get(elsewhere[0])?.context, 'b')
          assert.equal(found.get(dead)?.dead_letter?.reason, 'handler_error')
          assert.equal(found.get(dead)?.dead_letter?.exception, 'PaymentError')
          assert.equal(found.get(dead)?.attempts, 3)
          assert.ok(result.sightings.every((s) => s.matched_by === 'trace_id'))
          // The ledger names the runs that published these ids.
          assert.ok(result.runs.some((r) => Object.values(r.ids).some((ids) => ids.includes(second[0]))), JSON.stringify(result.runs))
        }
        // A meta.id finds that one copy only.
        assert.equal(byId.code, 0, byId.stderr)
        const one = (jsonOutput(byId.stdout).result as unknown as TraceJson).sightings
        assert.deepEqual(one.map((s) => [s.id, s.state, s.matched_by]), [[dead, 'dead', 'meta.id']])
        // --jsonl writes the envelopes as peek --jsonl does: bq replay reads them.
        assert.equal(lines.code, 0, lines.stderr)
        const envelopes = lines.stdout.trim().split('\n').map((line) => JSON.parse(line) as {trace_id: string; meta: {id: string}})
        assert.deepEqual(envelopes.map((e) => e.meta.id).sort(), [...expected.keys()].sort())
        const file = path.join(dir, `${queue}.jsonl`)
        writeFileSync(file, lines.stdout)
        const replay = await runBq(['replay', file, '--dry-run', '--to', queue, '-b', broker.url()])
        assert.equal(replay.code, 0, replay.stderr)
        // The table names every copy; reads changed nothing (broker.readsCost: with consent, only delivery flags may have moved).
        assert.equal(table.code, 0, table.stderr)
        for (const messageId of expected.keys()) assert.ok(table.stdout.includes(messageId), table.stdout)
        assert.deepEqual(await broker.snapshot([queue, dlq]), before, 'trace changed what it read')
      } finally {
        await held?.release()
      }
    })

    test('a TraceID of a non-UUID trace_id is found by hashing each candidate\'s trace_id; --since leaves out older copies', async (t) => {
      if (!(await broker.available(t))) return
      const queue = uniqueQueue('trace-hash')
      await broker.prepare?.([queue])
      const traceId = `order-1042-${randomUUID().slice(0, 8)}`
      await publish(broker.url(), queue, 2)
      const ids = await publish(broker.url(), queue, 1, traceId)
      const scope = ['-b', broker.url(), ...queues(queue), '--json', ...(broker.readsCost ? ['--accept-delivery-cost'] : [])]
      // --since after the copy was taken leaves it out (Kafka seeks each partition there).
      const steps = [() => trace([otelTraceIdOf(traceId), ...scope]), () => trace([otelTraceIdOf(traceId), ...scope, '--since', String(Date.now() + 60_000)])]
      const [run, later] = broker.readsCost ? await inTurn(steps) : await Promise.all(steps.map((step) => step()))
      assert.equal(later.code, 1, later.stderr)
      assert.equal(run.code, 0, run.stderr)
      const sightings = (jsonOutput(run.stdout).result as unknown as TraceJson).sightings
      assert.deepEqual(sightings.map((s) => [s.id, s.trace_id, s.matched_by]), [[ids[0], traceId, 'otel_trace_id']])
    })

    // JSON may spell any character as \uXXXX: bodies whose ids hold none of the plain bytes,
    // written byte for byte (`bq replay --as-is`), as an encoder that escapes them would. Where
    // the binding projects the ids to broker headers, those find the message too; on Redis the
    // body is all there is.
    test('ids written with JSON escapes are found: an escaped digit of a trace_id, an escaped trace_id key for a TraceID', async (t) => {
      if (!(await broker.available(t))) return
      const queue = uniqueQueue('trace-escaped')
      await broker.prepare?.([queue])
      const traceId = randomUUID()
      const hashedId = `order-1042-${randomUUID().slice(0, 8)}`
      const escapedValue = make('urn:babel:orders:created', '{"order_id":1042}', {queue, traceId})
      const escapedKey = make('urn:babel:orders:created', '{"order_id":1043}', {queue, traceId: hashedId})
      const lines = [
        escapedValue.text.replace(`"trace_id":"${traceId}"`, `"trace_id":"${traceId.slice(0, 9)}\\u00${traceId.charCodeAt(9).toString(16)}${traceId.slice(10)}"`),
        escapedKey.text.replace('"trace_id"', '"trace\\u005fid"'),
      ]
      assert.ok(!lines[0].includes(traceId) && !lines[1].includes('"trace_id"'), lines.join('\n'))
      const file = path.join(dir, `${queue}.jsonl`)
      writeFileSync(file, lines.join('\n') + '\n')
      const replayed = await runBq(['replay', file, '--as-is', '--to', queue, '-y', '-b', broker.url()])
      assert.equal(replayed.code, 0, replayed.stderr)
      const scope = ['-b', broker.url(), ...queues(queue), '--json', ...(broker.readsCost ? ['--accept-delivery-cost'] : [])]
      const steps = [() => trace([traceId, ...scope]), () => trace([otelTraceIdOf(hashedId), ...scope])]
      const [byTraceId, byTraceIdOfHash] = broker.readsCost ? await inTurn(steps) : await Promise.all(steps.map((step) => step()))
      for (const [run, id, expected, matchedBy] of [[byTraceId, escapedValue.id, traceId, 'trace_id'], [byTraceIdOfHash, escapedKey.id, hashedId, 'otel_trace_id']] as const) {
        assert.equal(run.code, 0, run.stderr)
        const sightings = (jsonOutput(run.stdout).result as unknown as TraceJson).sightings
        assert.deepEqual(sightings.map((s) => [s.id, s.trace_id, s.matched_by]), [[id, expected, matchedBy]])
      }
    })

    test('an id that is nowhere exits 1 in one line; --plan reads nothing', async (t) => {
      if (!(await broker.available(t))) return
      const queue = uniqueQueue('trace-none')
      await broker.prepare?.([queue])
      await publish(broker.url(), queue, 2)
      const before = await broker.snapshot([queue])
      const scope = ['-b', broker.url(), ...queues(queue)]
      const [run, json, plan] = await Promise.all([trace([randomUUID(), ...scope]), trace([randomUUID(), ...scope, '--json']), trace([randomUUID(), ...scope, '--plan', '--json'])])
      assert.equal(run.code, 1, run.stderr)
      assert.equal(run.stdout, '')
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr)
      assert.match(run.stderr, /no copy of/)
      assert.equal(json.code, 1)
      const output = jsonOutput(json.stdout)
      assert.ok(!output.ok && output.error.code === 'not-found', json.stdout)
      assert.equal(plan.code, 0, plan.stderr)
      const places = (jsonOutput(plan.stdout).result as {brokers: Array<{places: Array<{queue: string; state: string; depth: number | null; cost: string}>}>}).brokers[0].places
      const waiting = places.find((p) => p.queue === queue && (p.state === 'waiting' || p.state === 'dead'))
      assert.equal(waiting?.depth, 2, JSON.stringify(places))
      assert.equal(waiting?.cost === 'free', !broker.readsCost, waiting?.cost)
      assert.deepEqual(await broker.snapshot([queue]), before, 'trace and --plan changed what they read')
    })

    test('places it could not read are named: a context whose broker cannot be opened, and (without consent) queues where a read costs a delivery', async (t) => {
      if (!(await broker.available(t))) return
      await defineContexts()
      // A broker that cannot be opened, at once (a store in a directory that does not exist).
      const added = await runBq(['context', 'add', 'down', '-b', `sqlite://${path.join(dir, 'missing-dir', 'x.db')}`], {env})
      assert.ok(added.code === 0 || /exists/.test(added.stderr), added.stderr)
      const queue = uniqueQueue('trace-unread')
      await broker.prepare?.([queue])
      const traceId = randomUUID()
      await publish(broker.url(), queue, 1, traceId)
      const before = await broker.snapshot([queue])
      const run = await trace([traceId, ...underTest(), '--context', 'down', ...queues(queue), '--json'])
      const output = jsonOutput(run.stdout)
      const result = (output.ok ? output.result : output.result) as unknown as TraceJson
      assert.ok(result.unread.some((u) => u.context === 'down'), JSON.stringify(result.unread))
      if (broker.readsCost) {
        assert.equal(run.code, 1, 'nothing was read without consent')
        assert.ok(result.unread.some((u) => u.queue === queue && /accept-delivery-cost/.test(u.why)), JSON.stringify(result.unread))
      } else {
        assert.equal(run.code, 0, run.stderr)
        assert.equal(result.sightings.length, 1)
      }
      assert.deepEqual(await broker.snapshot([queue]), before)
    })
  })
}
