/**
 * The end-to-end command suite: every operator command through bin/run.js against one broker.
 * Each broker has a small test file that calls `commandSuite`; each test uses its own queues.
 * Under CI=true a missing broker fails.
 */
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import type {Capabilities} from '../../src/lib/brokers/adapter.js'
import {openBroker} from '../../src/lib/brokers/registry.js'
import {decode, resetForRedrive} from '../../src/lib/envelope/index.js'
import {requireBroker, uniqueQueue} from '../support/brokers.js'
import {hasStackTrace, jsonOutput, jsonResult, runBq, startBq} from '../support/cli.js'
import {repoRoot} from '../support/conformance.js'
import {isEmbeddedStore, storeBodies, storeDepth} from '../support/embedded-store.js'

export const redisUrl = process.env.BQ_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0'
export const amqpUrl = process.env.BQ_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672'
const exampleDlq = readFileSync(path.join(repoRoot, 'examples', 'orders.dlq.jsonl'), 'utf8')
const registry = path.join(repoRoot, 'examples', 'registry.json')

let workDir: string
before(() => {
  workDir = mkdtempSync(path.join(tmpdir(), 'bq-e2e-'))
})
after(() => rmSync(workDir, {recursive: true, force: true}))

export interface BrokerCase {
  name: string
  url: () => string
  available: (t: TestContext) => Promise<boolean>
  /**
   * The name of a queue derived from a test queue (its DLQ, a sandbox), for brokers whose queue
   * names cannot contain dots (SQS); the DLQ is then passed with --dlq. Absent: `<queue>.<suffix>`.
   */
  derivedQueue?: (queue: string, suffix: string) => string
  /**
   * The test broker creates queues on first use where the real one does not (bq's Service Bus
   * test server): a missing queue cannot be seen there (its own test file checks one on a server
   * that does not create them).
   */
  createsQueuesOnFirstUse?: boolean
  /**
   * Flags every redrive that is not a dry run gets: `--accept-delivery-cost` where the suite's DLQ
   * (`<queue>.dlq`) counts deliveries (a Service Bus queue dead-letters at its MaxDeliveryCount).
   * The refusal without it is tested in the broker's own delivery-cost tests.
   */
  redriveFlags?: string[]
  /**
   * The broker cannot list its queues (bq's Service Bus test server has no management API):
   * `bq dlq ls` must say so, in one line, with exit 1.
   */
  cannotListQueues?: boolean
}

/**
 * What the suite expects of a broker (true peek, headers, delay, the replay marker, --receive,
 * order) is what the adapter `bq` opens for its URL declares: opened here, in the test process,
 * through the registry, and closed again.
 */
export async function capabilitiesOf(url: string): Promise<Capabilities> {
  const adapter = await openBroker(url)
  try {
    return {...adapter.capabilities}
  } finally {
    await adapter.close()
  }
}

export const brokerCases: Record<string, BrokerCase> = {
  sqlite: {name: 'embedded sqlite', url: () => `sqlite://${path.join(workDir, 'queues.db')}`, available: async () => true},
  redis: {name: 'redis', url: () => redisUrl, available: (t) => requireBroker(t, 'Redis', new URL(redisUrl).hostname, Number(new URL(redisUrl).port || 6379))},
  rabbitmq: {name: 'rabbitmq', url: () => amqpUrl, available: (t) => requireBroker(t, 'RabbitMQ', new URL(amqpUrl).hostname, Number(new URL(amqpUrl).port || 5672))},
}

/** The example DLQ export rewritten so its original queue is this test's own queue. */
export function dlqExport(queue: string, extraLines: string[] = []): string {
  const file = path.join(workDir, `${queue}.jsonl`)
  writeFileSync(file, exampleDlq.replaceAll('"original_queue":"orders"', `"original_queue":"${queue}"`) + extraLines.join('\n') + (extraLines.length ? '\n' : ''))
  return file
}

export async function json(args: string[]): Promise<Record<string, unknown>> {
  const result = await runBq([...args, '--json'])
  assert.ok(!hasStackTrace(result.stderr), result.stderr)
  try {
    return jsonResult(result.stdout)
  } catch {
    throw new Error(`not JSON (exit ${result.code}): ${result.stdout}\n${result.stderr}`)
  }
}

/**
 * Every body in a queue, exactly as stored (via peek --json, which base64-encodes non-envelopes).
 * The embedded store is read in the test's own process (test/support/embedded-store.ts): the
 * same adapter, without a start of bq per check.
 */
export async function rawBodies(url: string, queue: string, extra: string[] = []): Promise<string[]> {
  if (isEmbeddedStore(url) && extra.length === 0) return storeBodies(url, queue, 1000)
  const peek = await json(['peek', queue, '-b', url, '--limit', '1000', ...extra])
  return (peek.messages as Array<{body: string; body_encoding: string}>).map((m) => (m.body_encoding === 'base64' ? Buffer.from(m.body, 'base64').toString('utf8') : m.body))
}

/**
 * Messages waiting in a queue, as `bq peek` reports its depth (the embedded store read in-process,
 * as for rawBodies); one that does not exist (on brokers where queues exist apart from their
 * messages) holds none.
 */
export async function depth(url: string, queue: string, extra: string[] = []): Promise<number> {
  if (isEmbeddedStore(url) && extra.length === 0) return storeDepth(url, queue)
  const result = await runBq(['peek', queue, '-b', url, '--limit', '1', ...extra, '--json'])
  const output = jsonOutput(result.stdout)
  assert.ok(!hasStackTrace(result.stderr), result.stderr)
  if (!output.ok && output.error.code === 'queue-not-found') return 0
  return jsonResult(result.stdout).depth as number
}

/** Resolves once the text seen so far holds `count` lines (fails after 20 s). */
async function untilLines(seen: () => string, count: number): Promise<void> {
  const until = Date.now() + 20_000
  while (seen().split('\n').filter((line) => line !== '').length < count) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${count} line(s); seen: ${seen()}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const depthOf = depth
const bodiesOf = rawBodies

/** Registers the command tests for one broker. */
export function commandSuite(broker: BrokerCase): void {
  /** The broker's capabilities, read by `ready` once the broker answers. */
  let caps: Capabilities | undefined
  /** `--receive` for read commands where reading has side effects (capabilities.receiveSideEffects). */
  let read: string[] = []
  /** False (after t.skip) when the broker is not reachable; otherwise reads its capabilities once. */
  const ready = async (t: TestContext): Promise<boolean> => {
    if (!(await broker.available(t))) return false
    if (caps === undefined) {
      caps = await capabilitiesOf(broker.url())
      read = caps.receiveSideEffects === true ? ['--receive'] : []
    }
    return true
  }
  const capabilities = (): Capabilities => {
    assert.ok(caps !== undefined, 'ready(t) reads the capabilities first')
    return caps
  }
  const sub = (queue: string, suffix: string) => broker.derivedQueue?.(queue, suffix) ?? `${queue}.${suffix}`
  /** `--dlq <name>` where the DLQ is not the default `<queue>.dlq`. */
  const dlqFlag = (queue: string) => (broker.derivedQueue ? ['--dlq', sub(queue, 'dlq')] : [])
  const consent = broker.redriveFlags ?? []
  const depth = (url: string, queue: string) => depthOf(url, queue, read)
  const rawBodies = (url: string, queue: string) => bodiesOf(url, queue, read)
  /** Lists compared in order, or as sets where the broker keeps no order. */
  const inOrder = <T>(list: T[]): T[] => (capabilities().ordered === false ? [...list].sort() : list)
  describe(`commands on ${broker.name}`, () => {
    test('publish prints ids; peek shows them; --jsonl exports envelopes', async (t) => {
      if (!(await ready(t))) return
      const queue = uniqueQueue('pub')
      const published = await runBq(['publish', 'urn:babel:orders:created', '-d', '{"order_id":1042,"amount":99.90,"big":9007199254740993}', '-q', queue, '--count', '3', '-b', broker.url()])
      assert.equal(published.code, 0, published.stderr)
      const ids = published.stdout.trim().split('\n')
      assert.equal(ids.length, 3)
      const peek = await json(['peek', queue, '-b', broker.url(), ...read])
      assert.equal(peek.depth, 3)
      const messages = peek.messages as Array<Record<string, unknown>>
      assert.deepEqual(inOrder(messages.map((m) => m.id as string)), inOrder(ids))
      for (const m of messages) {
        assert.equal(m.urn, 'urn:babel:orders:created')
        assert.equal(m.valid, true)
        assert.equal(m.attempts, 0)
        assert.match(m.body as string, /"data":\{"order_id":1042,"amount":99\.90,"big":9007199254740993\}/)
      }
      const jsonl = await runBq(['peek', queue, '-b', broker.url(), '--jsonl', ...read])
      const lines = jsonl.stdout.trim().split('\n')
      assert.equal(lines.length, 3)
      assert.deepEqual(inOrder(lines.map((l) => decode(l).id as string)), inOrder(ids))
      // Peek leaves the queue as it was.
      assert.equal(await depth(broker.url(), queue), 3)
      const table = await runBq(['peek', queue, '-b', broker.url(), '--limit', '2', ...read])
      assert.match(table.stdout, /^#\tid\turn\ttrace\tattempts\tage\tlang\tsize\tvalid$/m)
      assert.equal(table.stdout.trim().split('\n').length, 3)
      // A broker without a true peek says so; one with a true peek warns of nothing.
      if (capabilities().truePeek) assert.doesNotMatch(table.stderr, /no true peek/)
      else assert.match(table.stderr, /no true peek/)
    })

    test('peek filters by URN glob and trace id', async (t) => {
      if (!(await ready(t))) return
      const queue = uniqueQueue('filter')
      await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '-b', broker.url(), '--count', '2'])
      const traced = await runBq(['publish', 'urn:babel:billing:paid', '-d', '{}', '-q', queue, '-b', broker.url(), '--trace-id', '7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b'])
      const byUrn = await json(['peek', queue, '-b', broker.url(), '--urn', 'urn:babel:orders:*', ...read])
      assert.equal((byUrn.messages as unknown[]).length, 2)
      const byTrace = await json(['peek', queue, '-b', broker.url(), '--trace-id', '7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b', ...read])
      assert.deepEqual((byTrace.messages as Array<{id: string}>).map((m) => m.id), [traced.stdout.trim()])
    })

    test('peek --follow --jsonl prints what waits, then what arrives, byte-exact, consuming nothing; Ctrl-C exits 130 (refused without a true peek)', async (t) => {
      if (!(await ready(t))) return
      const queue = uniqueQueue('follow')
      if (!capabilities().truePeek) {
        const refused = await runBq(['peek', queue, '--follow', '--jsonl', ...read, '-b', broker.url()])
        assert.equal(refused.code, 2, refused.stderr)
        assert.match(refused.stderr, /no true peek .* --follow/)
        return
      }
      const publish = async (count: string) => assert.equal((await runBq(['publish', 'urn:babel:orders:created', '-d', '{"amount":99.90}', '-q', queue, '--count', count, '-b', broker.url()])).code, 0)
      await publish('1')
      const {child, done} = startBq(['peek', queue, '--follow', '--jsonl', '-b', broker.url()])
      let seen = ''
      child.stdout.on('data', (chunk: Buffer) => (seen += chunk.toString('utf8')))
      await untilLines(() => seen, 1)
      await publish('2')
      await untilLines(() => seen, 3)
      child.kill('SIGINT')
      const result = await done
      assert.equal(result.code, 130, result.stderr)
      assert.match(result.stderr, /stopped following .* \(SIGINT\): 3 message\(s\) shown, 3 scanned/)
      const printed = result.stdout.trim().split('\n')
      assert.deepEqual(inOrder(printed), inOrder(await rawBodies(broker.url(), queue)))
      assert.equal(await depth(broker.url(), queue), 3, 'follow consumed nothing')
    })

    test('a queue that does not exist: a one-line queue-not-found error (exit 1) where queues exist apart from their messages, else empty', async (t) => {
      if (!(await ready(t))) return
      const queue = uniqueQueue('missing')
      const reads = [
        ['dlq', 'inspect', queue, ...dlqFlag(queue), ...read],
        ['peek', queue, ...read],
        ['dlq', 'redrive', queue, '--yes', ...dlqFlag(queue), ...consent],
      ]
      for (const args of reads) {
        const human = await runBq([...args, '-b', broker.url()])
        const jsonRun = await runBq([...args, '-b', broker.url(), '--json'])
        if (capabilities().queuesExist && !broker.createsQueuesOnFirstUse) {
          assert.equal(human.code, 1, `${args.join(' ')}: ${human.stderr}`)
          assert.match(human.stderr, /^Error: .*does not exist.*\n$/, args.join(' '))
          assert.equal(human.stderr.split('\n').length, 2, human.stderr)
          const output = jsonOutput(jsonRun.stdout)
          assert.equal(output.ok, false)
          assert.equal(!output.ok && output.error.code, 'queue-not-found')
          assert.equal(jsonRun.code, 1)
        } else {
          assert.equal(human.code, 0, `${args.join(' ')}: ${human.stderr}`)
          assert.equal(jsonRun.code, 0, jsonRun.stdout)
        }
      }
    })

    test('publish --dry-run sends nothing; --registry refuses bad data; --delay where supported', async (t) => {
      if (!(await ready(t))) return
      const queue = uniqueQueue('dry')
      const dry = await runBq(['publish', 'urn:babel:orders:created', '-d', '{"order_id":1}', '-q', queue, '--dry-run', '-b', broker.url()])
      assert.equal(dry.code, 0)
      assert.equal(JSON.parse(dry.stdout).meta.queue, queue)
      const bad = await runBq(['publish', 'urn:babel:orders:created', '-d', '{"order_id":0}', '-q', queue, '--registry', registry, '-b', broker.url()])
      assert.equal(bad.code, 1)
      assert.match(bad.stderr, /does not match the schema/)
      assert.equal(await depth(broker.url(), queue), 0)
      const delayed = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--delay', '60000', '-b', broker.url()])
      if (capabilities().delay) {
        assert.equal(delayed.code, 0, delayed.stderr)
        assert.equal(await depth(broker.url(), queue), 0, 'a delayed message is not visible yet')
      } else {
        assert.equal(delayed.code, 2)
        assert.match(delayed.stderr, /no delayed delivery/)
      }
    })

    test('dlq inspect groups by reason, URN, exception and original queue; poison is its own group', async (t) => {
      if (!(await ready(t))) return
      const queue = uniqueQueue('inspect')
      const file = dlqExport(queue)
      const seeded = await runBq(['replay', file, '--as-is', '--to', sub(queue, 'dlq'), '--yes', '-b', broker.url()])
      assert.equal(seeded.code, 0, seeded.stderr)
      const poison = path.join(workDir, `${queue}.poison`)
      writeFileSync(poison, 'this is not json\n')
      assert.equal((await runBq(['replay', poison, '--as-is', '--to', sub(queue, 'dlq'), '--yes', '-b', broker.url()])).code, 0)
      const report = await json(['dlq', 'inspect', queue, '-b', broker.url(), ...dlqFlag(queue), ...read])
      assert.equal(report.depth, 5)
      const groups = report.groups as Array<{key: Record<string, string>; count: number; poison: boolean; oldest_failed_at: string | null}>
      assert.equal(groups.reduce((sum, g) => sum + g.count, 0), 5)
      assert.equal(groups.filter((g) => g.poison).length, 1)
      const timeouts = groups.find((g) => g.key.exception === 'App\\Exceptions\\GatewayTimeout')
      assert.deepEqual(timeouts?.key, {reason: 'failed', urn: 'urn:babel:orders:created', exception: 'App\\Exceptions\\GatewayTimeout', original_queue: queue})
      assert.equal(timeouts?.oldest_failed_at, new Date(1764489660000).toISOString())
      const byReason = await json(['inspect-dlq', queue, '-b', broker.url(), '--group-by', 'reason', ...dlqFlag(queue), ...read])
      assert.deepEqual((byReason.groups as Array<{key: Record<string, string>; count: number}>).filter((g) => g.key.reason).map((g) => [g.key.reason, g.count]), [['failed', 3], ['unknown_urn', 1]])
      const listed = await json(['dlq', 'inspect', queue, '-b', broker.url(), '--list', ...dlqFlag(queue), ...read])
      assert.equal((listed.messages as unknown[]).length, 5)
      assert.equal(await depth(broker.url(), sub(queue, 'dlq')), 5, 'inspect consumed nothing')
    })

    test('dlq ls lists the DLQ with depth, failure span, reasons and original queue; --fail-above and --max-age exit 5', async (t) => {
      if (!(await ready(t))) return
      const queue = uniqueQueue('dlqls')
      const dlq = sub(queue, 'dlq')
      assert.equal((await runBq(['replay', dlqExport(queue), '--as-is', '--to', dlq, '--yes', '-b', broker.url()])).code, 0)
      const only = ['--match', `${queue}*`]
      if (broker.cannotListQueues) {
        const refused = await runBq(['dlq', 'ls', '-b', broker.url(), ...only])
        assert.equal(refused.code, 1, refused.stderr)
        assert.match(refused.stderr, /^Error: cannot list the entities .*management/)
        assert.equal(refused.stderr.trim().split('\n').length, 1, refused.stderr)
        return
      }
      const listing = await json(['dlq', 'ls', '-b', broker.url(), ...only])
      const dlqs = listing.dlqs as Array<Record<string, unknown>>
      assert.deepEqual(dlqs.map((d) => [d.dlq, d.kind, d.depth]), [[dlq, 'convention', 4]])
      assert.deepEqual(dlqs[0].original_queues, [queue])
      const sampled = capabilities().truePeek && capabilities().receiveSideEffects !== true
      if (sampled) {
        assert.equal(dlqs[0].sampled, 4)
        assert.equal(dlqs[0].oldest_failed_at, new Date(1764489660000).toISOString())
        assert.deepEqual(dlqs[0].top_reasons, [{reason: 'failed', count: 3}, {reason: 'unknown_urn', count: 1}])
      } else {
        assert.equal(dlqs[0].sampled, 0)
        assert.match(dlqs[0].not_sampled as string, /no true peek/)
      }
      const human = await runBq(['dlq', 'list', '-b', broker.url(), ...only])
      assert.equal(human.code, 0, human.stderr)
      assert.match(human.stdout, new RegExp(`^${dlq.replaceAll('.', '\\.')}\tconvention\t4\t`, 'm'))
      const full = await runBq(['dlq', 'ls', '-b', broker.url(), ...only, '--fail-above', '3', '--json'])
      assert.equal(full.code, 5, full.stderr)
      const output = jsonOutput(full.stdout)
      assert.equal(!output.ok && output.error.code, 'alert')
      assert.equal(((output as {result?: {alerts: unknown[]}}).result?.alerts ?? []).length, 1)
      assert.equal((await runBq(['dlq', 'ls', '-b', broker.url(), ...only, '--fail-above', '4'])).code, 0)
      const aged = await runBq(['dlq', 'ls', '-b', broker.url(), ...only, '--max-age', '1h'])
      if (sampled) assert.equal(aged.code, 5, aged.stderr)
      else assert.match(aged.stderr, /--max-age cannot judge/)
      assert.equal(await depth(broker.url(), dlq), 4, 'dlq ls consumed nothing')
    })

    test('dlq redrive: dry run changes nothing; --yes needed; selected move byte-exact; the rest stay in order', async (t) => {
      if (!(await ready(t))) return
      const queue = uniqueQueue('redrive')
      const dlq = sub(queue, 'dlq')
      await runBq(['replay', dlqExport(queue), '--as-is', '--to', dlq, '--yes', '-b', broker.url()])
      const poison = path.join(workDir, `${queue}.poison`)
      writeFileSync(poison, '{"broken": \n')
      await runBq(['replay', poison, '--as-is', '--to', dlq, '--yes', '-b', broker.url()])
      const before = await rawBodies(broker.url(), dlq)
      assert.equal(before.length, 5)

      const dry = await runBq(['dlq', 'redrive', queue, '--dry-run', '-b', broker.url(), ...dlqFlag(queue), ...read])
      assert.equal(dry.code, 0, dry.stderr)
      assert.match(dry.stdout, /would move\t4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa001\turn:babel:orders:created\treason=failed -> /)
      assert.match(dry.stderr, /dry run: 5 examined: 4 would be moved, 0 not selected, 1 poison, 0 failed/)
      assert.deepEqual(inOrder(await rawBodies(broker.url(), dlq)), inOrder(before))

      const refused = await runBq(['dlq', 'redrive', queue, '-b', broker.url(), ...dlqFlag(queue), ...consent])
      assert.equal(refused.code, 2)
      assert.match(refused.stderr, /add --yes/)
      assert.deepEqual(inOrder(await rawBodies(broker.url(), dlq)), inOrder(before))

      const run = await json(['dlq', 'redrive', queue, '--select', 'reason=failed', '--select', 'exception~Timeout', '--yes', '-b', broker.url(), ...dlqFlag(queue), ...consent])
      assert.deepEqual(run.counts, {examined: 5, redriven: 2, would_redrive: 0, skipped: 2, poison: 1, failed: 0})
      const items = run.items as Array<Record<string, unknown>>
      const moved = ['4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa001', '4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa002']
      assert.deepEqual(inOrder(items.filter((i) => i.outcome === 'redriven').map((i) => [i.id, i.reason, i.target])), moved.map((id) => [id, 'failed', queue]))
      const idOf = (body: string) => (body.startsWith('{"job"') ? decode(body).id : undefined)
      // The target holds the originals with only dead_letter removed and attempts 0.
      const expected = before.filter((body) => moved.includes(idOf(body) ?? '')).map((body) => resetForRedrive(decode(body)).text)
      assert.deepEqual(inOrder(await rawBodies(broker.url(), queue)), inOrder(expected))
      assert.match(expected.find((body) => body.includes(moved[1])) ?? '', /"amount_cents":9007199254740993/)
      // Unselected and poison stay, in their original order (where the broker keeps one).
      assert.deepEqual(inOrder(await rawBodies(broker.url(), dlq)), inOrder(before.filter((body) => !moved.includes(idOf(body) ?? ''))))
    })

    test('dlq redrive --patch: patched copies differ only where patched; a message the patch fails on stays byte-exact', async (t) => {
      if (!(await ready(t))) return
      const queue = uniqueQueue('patch')
      const dlq = sub(queue, 'dlq')
      await runBq(['replay', dlqExport(queue), '--as-is', '--to', dlq, '--yes', '-b', broker.url()])
      const before = await rawBodies(broker.url(), dlq)
      const patch = path.join(workDir, `${queue}.patch.json`)
      writeFileSync(patch, '[{"op":"test","path":"/dead_letter/reason","value":"failed"},{"op":"replace","path":"/data/amount_cents","value":12345678901234567890}]')
      const run = await runBq(['dlq', 'redrive', queue, '--patch', patch, '--yes', '--json', '-b', broker.url(), ...dlqFlag(queue), ...consent])
      assert.equal(run.code, 3, run.stderr)
      const report = jsonResult(run.stdout)
      assert.deepEqual(report.counts, {examined: 4, redriven: 3, would_redrive: 0, skipped: 0, poison: 0, failed: 1})
      assert.match(JSON.stringify(report.items), /patch operation 1 \(test \/dead_letter\/reason\): the value there is not \\"failed\\"/)
      const failedOne = (body: string) => body.includes('"reason":"unknown_urn"')
      const expected = before.filter((body) => !failedOne(body)).map((body) => resetForRedrive(decode(body.replace(/"amount_cents":\d+/, '"amount_cents":12345678901234567890'))).text)
      assert.deepEqual(inOrder(await rawBodies(broker.url(), queue)), inOrder(expected))
      assert.deepEqual(await rawBodies(broker.url(), dlq), before.filter(failedOne))
    })

    test('--where (exact beyond 2^53) and --since/--until select on peek and redrive; a bad expression is exit 2 naming its column', async (t) => {
      if (!(await ready(t))) return
      const queue = uniqueQueue('where')
      const dlq = sub(queue, 'dlq')
      await runBq(['replay', dlqExport(queue), '--as-is', '--to', dlq, '--yes', '-b', broker.url()])
      const big = await json(['peek', dlq, '-b', broker.url(), '--where', 'data.amount_cents == 9007199254740993 && dead_letter.reason == "failed"', ...read])
      assert.deepEqual((big.messages as Array<{id: string}>).map((m) => m.id), ['4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa002'])
      // peek times a message by its enqueue time where the broker records one, else by meta.created_at.
      const all = (await json(['peek', dlq, '-b', broker.url(), ...read])).messages as Array<{enqueued_at: string | null; created_at: string}>
      const since = '2025-11-30T08:03:00Z'
      const expected = all.filter((m) => Date.parse(m.enqueued_at ?? m.created_at) >= Date.parse(since)).length
      const recent = await json(['peek', dlq, '-b', broker.url(), '--since', since, ...read])
      assert.equal((recent.messages as unknown[]).length, expected)
      // A broker that keeps a log (Kafka) seeks to the time: the records before it are not even read.
      if (capabilities().logBrowse) assert.equal(recent.scanned, expected)
      // A DLQ is timed by failed_at: [08:02:40, 08:06:00) holds 002 and 003; --where keeps 002 (and 004, outside the window).
      const run = await json(['dlq', 'redrive', queue, '--where', 'data.currency == "USD" || data.order_id == 5004', '--since', '1764489760000', '--until', '2025-11-30T08:06:00Z', '--yes', '-b', broker.url(), ...dlqFlag(queue), ...consent])
      assert.deepEqual(run.counts, {examined: 4, redriven: 1, would_redrive: 0, skipped: 3, poison: 0, failed: 0})
      const moved = await rawBodies(broker.url(), queue)
      assert.equal(moved.length, 1)
      assert.match(moved[0], /"amount_cents":9007199254740993/)
      const bad = await runBq(['dlq', 'redrive', queue, '--where', 'data.currency = "USD"', '--yes', '-b', broker.url(), ...dlqFlag(queue), ...consent])
      assert.equal(bad.code, 2)
      assert.equal(bad.stderr, 'Error: --where: column 15: Unexpected character: = (in: data.currency = "USD")\n')
      assert.equal(await depth(broker.url(), dlq), 3)
    })

    test('a redrive is recorded in the run ledger (bq runs show) with its reason and ids; its copy carries bq-run-id where the broker has headers', async (t) => {
      if (!(await ready(t))) return
      const queue = uniqueQueue('ledger')
      const dlq = sub(queue, 'dlq')
      await runBq(['replay', dlqExport(queue), '--as-is', '--to', dlq, '--yes', '-b', broker.url()])
      const run = await json(['dlq', 'redrive', queue, '--select', 'reason=unknown_urn', '--reason', 'INC-7 schema deployed', '--yes', '-b', broker.url(), ...dlqFlag(queue), ...consent])
      const runId = run.run_id as string
      assert.match(runId, /^[0-9a-f-]{36}$/)
      const shown = await json(['runs', 'show', runId.slice(0, 13)])
      assert.equal(shown.id, runId)
      assert.equal(shown.command, 'dlq redrive')
      assert.equal(shown.outcome, 'ok')
      assert.equal(shown.reason, 'INC-7 schema deployed')
      assert.equal(shown.source, dlq)
      assert.deepEqual(shown.ids, {moved: ['4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa003']})
      assert.equal((shown.counts as {redriven: number}).redriven, 1)
      assert.deepEqual(shown.selection, {select: ['reason=unknown_urn'], max: 0, to: null})
      // The broker and the command line as recorded: no password.
      assert.doesNotMatch(`${shown.broker as string} ${shown.command_line as string}`, /guest:guest|bq:bq@|SharedAccessKey=(?!\*\*\*)/)
      const listed = await json(['runs', 'list', '--limit', '50'])
      assert.ok((listed.runs as Array<{id: string}>).some((r) => r.id === runId))
      const peek = await json(['peek', queue, '-b', broker.url(), '--headers', ...read])
      const headers = (peek.messages as Array<{headers: Record<string, unknown>}>)[0].headers
      // Redis frames a bare envelope only for headers it carries anyway: this one had none.
      // (Some bindings nest or type their headers: RabbitMQ's `headers` property, SQS's {DataType, StringValue}.)
      if (capabilities().headers && broker.name !== 'redis') assert.match(JSON.stringify(headers), new RegExp(`"bq-run-id":(\\{[^}]*)?"${runId}"`))
      // A dry run is not recorded.
      const dry = await json(['dlq', 'redrive', queue, '--dry-run', '-b', broker.url(), ...dlqFlag(queue), ...read])
      assert.equal(dry.run_id, undefined)
    })

    test('dlq redrive --to sandbox, --max, --rate, and the redrive alias', async (t) => {
      if (!(await ready(t))) return
      const queue = uniqueQueue('sandbox')
      await runBq(['replay', dlqExport(queue), '--as-is', '--to', sub(queue, 'dlq'), '--yes', '-b', broker.url()])
      const first = await json(['redrive', queue, '--to', sub(queue, 'sandbox'), '--max', '1', '--yes', '-b', broker.url(), ...dlqFlag(queue), ...consent])
      assert.equal((first.counts as {redriven: number}).redriven, 1)
      const rest = await json(['dlq', 'redrive', queue, '--to', sub(queue, 'sandbox'), '--rate', '20', '--yes', '-b', broker.url(), ...dlqFlag(queue), ...consent])
      assert.equal((rest.counts as {redriven: number}).redriven, 3)
      assert.equal(await depth(broker.url(), sub(queue, 'sandbox')), 4)
      assert.equal(await depth(broker.url(), sub(queue, 'dlq')), 0)
      assert.equal(await depth(broker.url(), queue), 0)
    })

    test('--bypass stamps bq-replay-bypass where the broker has headers, and warns where not', async (t) => {
      if (!(await ready(t))) return
      const queue = uniqueQueue('bypass')
      await runBq(['replay', dlqExport(queue), '--as-is', '--to', sub(queue, 'dlq'), '--yes', '-b', broker.url(), '--max', '1'])
      const result = await runBq(['dlq', 'redrive', queue, '--bypass', '--yes', '-b', broker.url(), ...dlqFlag(queue), ...consent])
      assert.equal(result.code, 0, result.stderr)
      const peek = await json(['peek', queue, '-b', broker.url(), '--headers', ...read])
      const headers = (peek.messages as Array<{headers: Record<string, unknown>}>)[0].headers
      const {headers: hasHeaders, bypassMarker = hasHeaders} = capabilities()
      if (!bypassMarker) {
        assert.match(result.stderr, /no-op/)
      } else {
        assert.doesNotMatch(result.stderr, /no-op/)
        // The same cross-SDK spelling on every binding, Artemis included.
        if (hasHeaders) assert.match(JSON.stringify(headers), /"bq-replay-bypass"/, JSON.stringify(headers))
      }
    })

    test('dlq purge: the selected messages go to the backup, then leave; replaying the backup restores them byte for byte', async (t) => {
      if (!(await ready(t))) return
      const queue = uniqueQueue('purge')
      const dlq = sub(queue, 'dlq')
      await runBq(['replay', dlqExport(queue), '--as-is', '--to', dlq, '--yes', '-b', broker.url()])
      const poison = path.join(workDir, `${queue}.poison`)
      writeFileSync(poison, '{"broken": \n')
      await runBq(['replay', poison, '--as-is', '--to', dlq, '--yes', '-b', broker.url()])
      const before = await rawBodies(broker.url(), dlq)
      assert.equal(before.length, 5)
      const backup = path.join(workDir, `${queue}.backup.jsonl`)
      const run = await json(['dlq', 'purge', queue, '--select', 'reason=failed', '--backup', backup, '--yes', '-b', broker.url(), ...dlqFlag(queue), ...consent])
      assert.deepEqual(run.counts, {examined: 5, purged: 3, would_purge: 0, skipped: 1, poison: 1, failed: 0})
      assert.deepEqual(run.backup, {path: backup, messages: 3})
      const purged = ['4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa001', '4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa002', '4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa004']
      const idOf = (body: string) => (body.startsWith('{"job"') ? decode(body).id : undefined)
      // The unselected envelope and the poison stay, in their order where the broker keeps one.
      assert.deepEqual(inOrder(await rawBodies(broker.url(), dlq)), inOrder(before.filter((body) => !purged.includes(idOf(body) ?? ''))))
      const lines = readFileSync(backup, 'utf8').trim().split('\n')
      assert.deepEqual(lines.map((line) => decode(JSON.stringify(JSON.parse(line).envelope)).id).sort(), purged)
      const restored = await runBq(['replay', backup, '--as-is', '--to', dlq, '--yes', '-b', broker.url()])
      assert.equal(restored.code, 0, restored.stderr)
      assert.deepEqual((await rawBodies(broker.url(), dlq)).sort(), [...before].sort())
    })

    test('dlq redrive --copy publishes reset copies and leaves every original on the DLQ', async (t) => {
      if (!(await ready(t))) return
      const queue = uniqueQueue('copy')
      const dlq = sub(queue, 'dlq')
      await runBq(['replay', dlqExport(queue), '--as-is', '--to', dlq, '--yes', '-b', broker.url()])
      const before = await rawBodies(broker.url(), dlq)
      const run = await json(['dlq', 'redrive', queue, '--copy', '--to', sub(queue, 'sandbox'), '--yes', '-b', broker.url(), ...dlqFlag(queue), ...consent])
      assert.deepEqual(run.counts, {examined: 4, copied: 4, would_copy: 0, skipped: 0, poison: 0, failed: 0})
      assert.deepEqual([...new Set((run.items as Array<{outcome: string}>).map((item) => item.outcome))], ['copied'])
      assert.deepEqual(inOrder(await rawBodies(broker.url(), sub(queue, 'sandbox'))), inOrder(before.map((body) => resetForRedrive(decode(body)).text)))
      assert.deepEqual((await rawBodies(broker.url(), dlq)).sort(), [...before].sort())
    })

    test('replay: resets dead-lettered envelopes, --new-id keeps the trace, --as-is keeps the bytes', async (t) => {
      if (!(await ready(t))) return
      const queue = uniqueQueue('replay')
      const file = dlqExport(queue)
      const lines = readFileSync(file, 'utf8').trim().split('\n')
      const dry = await runBq(['replay', file, '--to', sub(queue, 'a'), '--dry-run', '-b', broker.url()])
      assert.equal(dry.code, 0)
      assert.equal(await depth(broker.url(), sub(queue, 'a')), 0)
      assert.equal((await runBq(['replay', file, '--to', sub(queue, 'a'), '--yes', '-b', broker.url()])).code, 0)
      assert.deepEqual(inOrder(await rawBodies(broker.url(), sub(queue, 'a'))), inOrder(lines.map((l) => resetForRedrive(decode(l)).text)))
      assert.equal((await runBq(['replay', file, '--to', sub(queue, 'b'), '--new-id', '--select', 'reason=unknown_urn', '--yes', '-b', broker.url()])).code, 0)
      const renewed = (await rawBodies(broker.url(), sub(queue, 'b'))).map((b) => decode(b))
      assert.equal(renewed.length, 1)
      assert.notEqual(renewed[0].id, '4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa003')
      assert.equal(renewed[0].traceId, '2d8e5f3a-4f6c-4a0d-9e3f-5a7b9c1d3e4f')
      assert.equal((await runBq(['replay', file, '--to', sub(queue, 'c'), '--as-is', '--yes', '-b', broker.url()])).code, 0)
      assert.deepEqual(inOrder(await rawBodies(broker.url(), sub(queue, 'c'))), inOrder(lines))
      const stdin = await runBq(['replay', '-', '--to', sub(queue, 'd'), '--yes', '-b', broker.url()], {stdin: lines[0]})
      assert.equal(stdin.code, 0, stdin.stderr)
      assert.equal(await depth(broker.url(), sub(queue, 'd')), 1)
    })
  })
}

