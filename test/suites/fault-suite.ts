/**
 * Network faults between bq and a broker, through test/support/fault-proxy.ts: bq runs against
 * the proxy's port while the test seeds and counts through the broker's own port.
 *
 * - outage: the proxy black-holes (connections accepted, nothing forwarded) before bq starts:
 *   peek, publish and dlq redrive must give up with exit 4 within --timeout (+ slack), in one line
 *   naming the broker. The time each took is printed (the "Faults" table of docs/redrive-guarantees.md).
 * - outage mid-redrive, a blip (reset) mid-redrive, a slow link: only where the data path runs
 *   through the proxy (`midRun`); every meta.id must survive (census of DLQ ∪ target).
 *
 * Each broker has a test/brokers/<broker>/faults.test.ts that calls `faultSuite`.
 */
import {after, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'

import type {BrokerAdapter} from '../../src/lib/brokers/adapter.js'
import {openBroker} from '../../src/lib/brokers/registry.js'
import {QueueNotFoundError} from '../../src/lib/errors.js'
import {uniqueQueue} from '../support/brokers.js'
import {jsonOutput, runBq, startBq, type CliResult} from '../support/cli.js'
import {FaultProxy} from '../support/fault-proxy.js'
import {census, drainAway, seed} from './crash-suite.js'

export interface FaultCase {
  /** As bq's messages name the broker (`RabbitMQ`). */
  name: string
  /** The broker's own URL: seeding and counting bypass the proxy. */
  directUrl: () => string
  /** Where the proxy forwards to. */
  upstream: () => {host: string; port: number}
  /** The proxy's port where the broker advertises it (Kafka's fault listener); ephemeral otherwise. */
  listenPort?: number
  /** The broker URL that goes through the proxy listening on `port`. */
  proxiedUrl: (port: number) => string
  available: (t: TestContext) => Promise<boolean>
  /** The mid-run tests (outage, blip, slow link during a redrive) need every byte of the data path through the proxy. */
  midRun: boolean
  /** The DLQ of a queue where `<queue>.dlq` is not a valid name (SQS). */
  dlqName?: (queue: string) => string
  redriveFlags?: string[]
  /** Waits until what a dead run held is back (SQS visibility, Service Bus locks). */
  settle?: (adapter: BrokerAdapter, queues: string[]) => Promise<void>
  censusByDraining?: boolean
  dispose?: (queues: string[]) => Promise<void>
  /**
   * The --timeout of the mid-run tests (outage, blip), default TIMEOUT. They need the run to be
   * moving when the fault starts; what they prove is the report and the rerun, not how fast bq
   * gives up (the outage-before-the-command test bounds that).
   */
  midRunTimeoutSeconds?: number
}

const TIMEOUT = 3
/** Node and oclif start-up, the registry's 1 s connect slack, a loaded 2-core machine. */
const SLACK_MS = 5000
const MID_RUN_MESSAGES = Number(process.env.BQ_FAULT_MESSAGES ?? 2000)
const SLOW_MESSAGES = 50

export function faultSuite(c: FaultCase): void {
  const dlqOf = (queue: string) => c.dlqName?.(queue) ?? `${queue}.dlq`
  const dlqFlag = (queue: string) => (c.dlqName ? ['--dlq', dlqOf(queue)] : [])
  const gaveUp: string[] = []
  after(() => {
    if (gaveUp.length > 0) console.log(`# ${c.name} give-up times with --timeout ${TIMEOUT}: ${gaveUp.join(', ')}`)
  })

  describe(`network faults on ${c.name}`, () => {
    test(`outage before the command: peek, publish and dlq redrive exit 4 within ${TIMEOUT} s + slack, naming ${c.name}`, {timeout: 120_000}, async (t) => {
      if (!(await c.available(t))) return
      const {host, port} = c.upstream()
      const proxy = await FaultProxy.start(host, port, c.listenPort)
      try {
        proxy.blackhole(true)
        const url = c.proxiedUrl(proxy.port)
        const queue = uniqueQueue('fault-outage')
        const commands: Array<[string, string[]]> = [
          ['peek', ['peek', queue, '--receive']],
          ['publish', ['publish', 'urn:babel:orders:created', '-q', queue, '-d', '{"n":1}']],
          ['dlq redrive', ['dlq', 'redrive', queue, '--yes', ...dlqFlag(queue), ...(c.redriveFlags ?? [])]],
        ]
        for (const [label, args] of commands) {
          const started = Date.now()
          const run = await runBq([...args, '-b', url, '--timeout', String(TIMEOUT)], {timeoutMs: 60_000})
          const ms = Date.now() - started
          gaveUp.push(`${label} ${(ms / 1000).toFixed(1)} s`)
          t.diagnostic(`${c.name} ${label}: exit ${run.code} after ${ms} ms: ${run.stderr.trim()}`)
          assert.equal(run.code, 4, `${label}: ${run.stderr}`)
          assert.ok(ms < TIMEOUT * 1000 + SLACK_MS, `${label} took ${ms} ms`)
          const lines = run.stderr.trim().split('\n')
          assert.equal(lines.length, 1, `${label}: one line, got: ${run.stderr}`)
          assert.match(lines[0], new RegExp(c.name.replace(/ /g, '\\s?'), 'i'), `${label}: names the broker`)
          assert.doesNotMatch(lines[0], /guest:guest|bq:bq@|SharedAccessKey=(?!\*\*\*)/, 'no password')
        }
      } finally {
        await proxy.close()
      }
    })

    if (!c.midRun) return

    /** Seeds the DLQ directly and returns the ids, the queues and a direct adapter. */
    const prepare = async (count: number) => {
      const adapter = await openBroker(c.directUrl())
      const queue = uniqueQueue('fault')
      const ids = await seed(adapter, queue, dlqOf(queue), count)
      const deadline = Date.now() + 30_000
      while ((await adapter.count(dlqOf(queue))) < count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200))
      return {adapter, queue, ids}
    }

    /** Every meta.id in DLQ ∪ target; duplicates at most `allowedDuplicates` (none where moves are atomic). */
    const checkCensus = async (adapter: BrokerAdapter, queue: string, ids: Set<string>, allowedDuplicates: number) => {
      await c.settle?.(adapter, [dlqOf(queue), queue])
      const seen = await census(adapter, [dlqOf(queue), queue], c.censusByDraining)
      const missing = [...ids].filter((id) => !seen.has(id))
      assert.deepEqual(missing.slice(0, 5), [], `${missing.length} meta.id(s) lost`)
      const extra = [...seen.values()].reduce((sum, n) => sum + n - 1, 0)
      const limit = adapter.capabilities.atomicMove ? 0 : allowedDuplicates
      assert.ok(extra <= limit, `${extra} duplicate(s), at most ${limit} allowed`)
      return {extra}
    }

    const cleanUp = async (adapter: BrokerAdapter, queue: string) => {
      if (!c.censusByDraining) await drainAway(adapter, [dlqOf(queue), queue]).catch(() => undefined)
      await c.dispose?.([dlqOf(queue), queue]).catch(() => undefined)
      await adapter.close()
    }

    /** Waits (bounded) until the target holds something: the redrive has started moving. */
    const midRunTimeout = String(c.midRunTimeoutSeconds ?? TIMEOUT)
    const firstMoves = async (adapter: BrokerAdapter, queue: string, run: ReturnType<typeof startBq>) => {
      const deadline = Date.now() + 60_000
      let ended: CliResult | undefined
      void run.done.then((result) => (ended = result))
      for (;;) {
        const moved = await adapter.count(queue).catch((error: unknown) => (error instanceof QueueNotFoundError ? 0 : Promise.reject(error)))
        if (moved > 0) return moved
        // A run that ended before it moved anything leaves no run to fault: say why it ended.
        if (ended !== undefined) throw new Error(`the redrive ended (exit ${ended.code}) before it moved anything: ${ended.stderr.trim()}`)
        if (Date.now() > deadline) throw new Error('the redrive moved nothing within 60 s')
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }

    const redriveArgs = (queue: string, url: string, extra: string[] = []) => ['dlq', 'redrive', queue, '--yes', '--json', ...dlqFlag(queue), ...(c.redriveFlags ?? []), '-b', url, ...extra]

    test(`outage mid-redrive of ${MID_RUN_MESSAGES}: exit 4 with the report; a rerun finishes; nothing lost`, {timeout: 300_000}, async (t) => {
      if (!(await c.available(t))) return
      const {host, port} = c.upstream()
      const proxy = await FaultProxy.start(host, port, c.listenPort)
      const {adapter, queue, ids} = await prepare(MID_RUN_MESSAGES)
      try {
        const run = startBq(redriveArgs(queue, c.proxiedUrl(proxy.port), ['--timeout', midRunTimeout]), {timeoutMs: 120_000})
        await firstMoves(adapter, queue, run)
        proxy.blackhole(true)
        const holed = Date.now()
        const result = await run.done
        const ms = Date.now() - holed
        t.diagnostic(`${c.name}: gave up ${ms} ms after the black hole, exit ${result.code}`)
        gaveUp.push(`mid-redrive ${(ms / 1000).toFixed(1)} s (--timeout ${midRunTimeout})`)
        const output = jsonOutput(result.stdout)
        let possible = 0
        if (result.code === 0) {
          t.diagnostic(`${c.name}: the run finished before the black hole mattered`)
        } else {
          assert.equal(result.code, 4, result.stderr + result.stdout)
          assert.equal(output.ok, false)
          const report = output.result as {counts?: {redriven?: number}; possible_duplicates?: number; stop_reason?: string} | undefined
          assert.ok(report !== undefined, `the error carries the report: ${result.stdout}`)
          possible = report.possible_duplicates ?? 0
          t.diagnostic(`${c.name}: report says ${report.counts?.redriven ?? 0} moved, possible_duplicates ${possible}; stop reason: ${report.stop_reason}`)
        }
        proxy.blackhole(false)
        proxy.reset()
        await c.settle?.(adapter, [dlqOf(queue), queue])
        const rerun = await runBq(redriveArgs(queue, c.proxiedUrl(proxy.port)), {timeoutMs: 240_000})
        assert.equal(rerun.code, 0, rerun.stderr + rerun.stdout.slice(0, 500))
        const {extra} = await checkCensus(adapter, queue, ids, possible)
        t.diagnostic(`${c.name}: census ok, ${extra} duplicate(s) (report allowed ${possible})`)
      } finally {
        await cleanUp(adapter, queue)
        await proxy.close()
      }
    })

    test(`a blip (every connection reset once) mid-redrive: finishes, or exits 4 and a rerun finishes; nothing lost`, {timeout: 300_000}, async (t) => {
      if (!(await c.available(t))) return
      const {host, port} = c.upstream()
      const proxy = await FaultProxy.start(host, port, c.listenPort)
      const {adapter, queue, ids} = await prepare(MID_RUN_MESSAGES)
      try {
        const run = startBq(redriveArgs(queue, c.proxiedUrl(proxy.port), ['--timeout', midRunTimeout]), {timeoutMs: 120_000})
        await firstMoves(adapter, queue, run)
        proxy.reset()
        const result = await run.done
        let possible = 0
        if (result.code === 0) {
          // A finished run still reports what it may have stored twice (SQS: a send the client
          // re-sent after the reset lost its answer).
          const report = jsonOutput(result.stdout).result as {possible_duplicates?: number} | undefined
          possible = report?.possible_duplicates ?? 0
          t.diagnostic(`${c.name}: blip → the run finished by itself; possible_duplicates ${possible}`)
        } else {
          const output = jsonOutput(result.stdout)
          // Exit 4 (the broker counted as lost), or a removal from the DLQ that failed after the
          // target confirmed its copies (exit 1, ack-failed): both stop with the report, counted
          // in possible_duplicates, and a rerun finishes.
          const ackFailed = result.code === 1 && !output.ok && output.error.code === 'ack-failed'
          assert.ok(result.code === 4 || ackFailed, result.stderr + result.stdout)
          const report = output.result as {possible_duplicates?: number; stop_reason?: string} | undefined
          possible = report?.possible_duplicates ?? 0
          t.diagnostic(`${c.name}: blip → exit ${result.code}; possible_duplicates ${possible}; stop reason: ${report?.stop_reason ?? (output.ok ? '' : output.error.message)}; rerunning`)
          await c.settle?.(adapter, [dlqOf(queue), queue])
          const rerun = await runBq(redriveArgs(queue, c.proxiedUrl(proxy.port)), {timeoutMs: 240_000})
          assert.equal(rerun.code, 0, rerun.stderr + rerun.stdout.slice(0, 500))
        }
        const {extra} = await checkCensus(adapter, queue, ids, possible)
        t.diagnostic(`${c.name}: blip census ok, ${extra} duplicate(s) (report said ${possible})`)
      } finally {
        await cleanUp(adapter, queue)
        await proxy.close()
      }
    })

    test(`two operators at once: two redrives of the same DLQ of ${MID_RUN_MESSAGES} move each message once, or one refuses`, {timeout: 300_000}, async (t) => {
      if (!(await c.available(t))) return
      const {adapter, queue, ids} = await prepare(MID_RUN_MESSAGES)
      try {
        const first = startBq(redriveArgs(queue, c.directUrl()), {timeoutMs: 240_000})
        const second = startBq(redriveArgs(queue, c.directUrl()), {timeoutMs: 240_000})
        const results = await Promise.all([first.done, second.done])
        let moved = 0
        let possible = 0
        for (const result of results) {
          const output = jsonOutput(result.stdout)
          if (result.code === 0) {
            moved += (output.result as {counts: {redriven: number}}).counts.redriven
            continue
          }
          // The broker could not let both drain: the loser says so in one line and moved nothing twice.
          assert.equal(output.ok, false, result.stdout)
          assert.doesNotMatch(result.stderr, /\n\s+at /, 'no stack trace')
          const report = output.result as {counts?: {redriven?: number}; possible_duplicates?: number} | undefined
          moved += report?.counts?.redriven ?? 0
          possible += report?.possible_duplicates ?? 0
          t.diagnostic(`${c.name}: one run stopped: exit ${result.code}, ${output.error.code}: ${output.error.message}`)
        }
        t.diagnostic(`${c.name}: exits ${results.map((r) => r.code).join(' and ')}; ${moved} moved in all`)
        // Whatever a stopped run left behind, a third run finishes the work.
        if (results.some((result) => result.code !== 0)) {
          await c.settle?.(adapter, [dlqOf(queue), queue])
          const rerun = await runBq(redriveArgs(queue, c.directUrl()), {timeoutMs: 240_000})
          assert.equal(rerun.code, 0, rerun.stderr + rerun.stdout.slice(0, 500))
        }
        const {extra} = await checkCensus(adapter, queue, ids, possible)
        t.diagnostic(`${c.name}: census ok, ${extra} duplicate(s) (reports allowed ${possible})`)
      } finally {
        await cleanUp(adapter, queue)
      }
    })

    test(`a slow link (200 ms each way) on a redrive of ${SLOW_MESSAGES}: exit 0 with the default timeouts, everything moved once`, {timeout: 300_000}, async (t) => {
      if (!(await c.available(t))) return
      const {host, port} = c.upstream()
      const proxy = await FaultProxy.start(host, port, c.listenPort)
      const {adapter, queue, ids} = await prepare(SLOW_MESSAGES)
      try {
        proxy.delay(200)
        const started = Date.now()
        const result = await runBq(redriveArgs(queue, c.proxiedUrl(proxy.port)), {timeoutMs: 240_000})
        t.diagnostic(`${c.name}: slow redrive of ${SLOW_MESSAGES} took ${Date.now() - started} ms`)
        assert.equal(result.code, 0, result.stderr + result.stdout.slice(0, 500))
        await checkCensus(adapter, queue, ids, 0)
      } finally {
        await cleanUp(adapter, queue)
        await proxy.close()
      }
    })
  })
}
