/**
 * Canary redrive, loop guard and --only-passing end to end through bin/run.js on one broker,
 * with an SDK-like consumer on the target queue (test/support/sdk-consumer.ts) that fails
 * messages back to the DLQ or acknowledges them. Each broker has a small file that calls
 * `canarySuite`; each test uses its own queues and the suite its own run ledger.
 */
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {openBroker} from '../../src/lib/brokers/registry.js'
import {annotate, fieldsOf, make} from '../../src/lib/envelope/index.js'
import {QueueNotFoundError} from '../../src/lib/errors.js'
import {uniqueQueue} from '../support/brokers.js'
import {hasStackTrace, jsonOutput, runBq, startBq} from '../support/cli.js'
import type {CliResult} from '../support/cli.js'
import {repoRoot} from '../support/conformance.js'
import {CONSUMER_EXCEPTION, startConsumer} from '../support/sdk-consumer.js'
import {hasScript, onTerminal} from '../support/terminal.js'

export interface CanaryCase {
  name: string
  url: () => string
  available: (t: TestContext) => Promise<boolean>
  /** The DLQ's name for a queue (default `<queue>.dlq`); passed with --dlq when it differs. */
  dlqOf?: (queue: string) => string
  /** Flags every redrive gets (--accept-delivery-cost where the DLQ counts deliveries). */
  redriveFlags?: string[]
  /** Flags every read of the DLQ gets (--receive where reading has side effects). */
  readFlags?: string[]
  /** The tests to run (default all): a broker's own file keeps to its time budget with fewer. */
  tests?: CanaryTest[]
  /** A move is at least once here (publish, then ack): after a SIGKILL a message may be on both sides. */
  atLeastOnce?: boolean
  /** Makes `dlq` a queue where every read costs a delivery (a RabbitMQ quorum queue, an SQS queue with a redrive policy): adds the refusal test. */
  countingDlq?: (q: {queue: string; dlq: string}) => Promise<void>
}

export type CanaryTest = 'abort' | 'ramp' | 'share' | 'guard' | 'passing' | 'signals' | 'terminal' | 'context'

/** Every test but `terminal` (the status line on a pseudo-terminal: the embedded store's file runs it). */
export const CANARY_TESTS: CanaryTest[] = ['abort', 'ramp', 'share', 'guard', 'passing', 'signals']

const registry = path.join(repoRoot, 'examples', 'registry.json')
/** The canary's exit code when a stage came back at or above --abort-at (src/lib/errors.ts). */
const CANARY_ABORTED = 8

let workDir: string
before(() => {
  workDir = mkdtempSync(path.join(tmpdir(), 'bq-canary-'))
})
after(() => rmSync(workDir, {recursive: true, force: true}))

export function sqliteCanaryCase(): CanaryCase {
  return {name: 'embedded sqlite', url: () => `sqlite://${path.join(workDir, 'queues.db')}`, available: async () => true}
}

export function canarySuite(broker: CanaryCase): void {
  describe(`canary redrive on ${broker.name}`, {concurrency: false}, () => {
    const env = () => ({BQ_LEDGER: path.join(workDir, 'ledger.db')})
    const queues = () => {
      const queue = uniqueQueue('canary')
      return {queue, dlq: broker.dlqOf?.(queue) ?? `${queue}.dlq`}
    }
    const dlqFlags = (q: {queue: string; dlq: string}) => (q.dlq === `${q.queue}.dlq` ? [] : ['--dlq', q.dlq])
    const bq = (args: string[]) => runBq([...args, '-b', broker.url()], {env: env()})
    const redriveArgs = (q: {queue: string; dlq: string}, extra: string[]) => ['dlq', 'redrive', q.queue, ...dlqFlags(q), '--yes', '--json', ...(broker.redriveFlags ?? []), ...extra]
    const result = (run: CliResult) => {
      assert.ok(!hasStackTrace(run.stderr), run.stderr)
      const output = jsonOutput(run.stdout)
      assert.ok(output.result !== undefined, run.stdout + run.stderr)
      return output.result as Record<string, unknown>
    }

    /** Publishes `count` SDK-style dead letters (data from `dataOf`) onto the DLQ in one batch; returns their ids in order. */
    const seed = async (q: {queue: string; dlq: string}, count: number, dataOf: (i: number) => string = (i) => `{"order_id":${i + 1},"amount_cents":${100 + i}}`) => {
      const adapter = await openBroker(broker.url())
      try {
        const envelopes = Array.from({length: count}, (_, i) => annotate(make('urn:babel:orders:created', dataOf(i), {queue: q.queue}), {reason: 'failed', originalQueue: q.queue, error: 'gateway timeout', exception: 'GatewayTimeout', failedAt: Date.now() - 3_600_000, attempts: 3}))
        await adapter.publish(q.dlq, envelopes.map((envelope) => ({body: envelope.toBuffer(), fields: fieldsOf(envelope)})))
        return envelopes.map((envelope) => envelope.id as string)
      } finally {
        await adapter.close()
      }
    }
    const wanted = (name: CanaryTest) => (broker.tests ?? CANARY_TESTS).includes(name)
    const dlqIds = async (q: {queue: string; dlq: string}) => {
      const inspect = result(await bq(['dlq', 'inspect', q.queue, ...dlqFlags(q), '--list', '--json', ...(broker.readFlags ?? [])]))
      return (inspect.messages as Array<{id: string}>).map((m) => m.id)
    }
    const until = async (what: string, check: () => Promise<boolean>) => {
      const deadline = Date.now() + 15_000
      while (!(await check())) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    }

    if (wanted('abort')) test('a consumer failing every message: the canary aborts after stage 1, exactly N moved, the returned ids reported, the rest on the DLQ', async (t) => {
      if (!(await broker.available(t))) return
      const q = queues()
      const ids = await seed(q, 20)
      const consumer = await startConsumer({url: broker.url(), queue: q.queue, dlq: q.dlq, fails: () => true})
      try {
        const run = await bq(redriveArgs(q, ['--canary', '4', '--watch', '3s', '--abort-at', '50%']))
        assert.equal(run.code, CANARY_ABORTED, run.stderr)
        assert.equal((jsonOutput(run.stdout) as {error?: {code: string}}).error?.code, 'canary-aborted')
        const report = result(run)
        const stages = report.stages as Array<{moved: number; returned: number; returned_ids: string[]; aborted?: boolean}>
        assert.equal(stages.length, 1)
        assert.equal(stages[0].moved, 4)
        assert.equal(stages[0].aborted, true)
        // It stops once the abort share is reached, well before the window ends.
        assert.ok(stages[0].returned >= 2, JSON.stringify(stages))
        assert.deepEqual(new Set(stages[0].returned_ids).size, stages[0].returned)
        for (const id of stages[0].returned_ids) assert.ok(ids.slice(0, 4).includes(id) || ids.includes(id))
        const returned = report.returned as {count: number; groups: Array<{key: Record<string, string>; count: number}>}
        assert.equal(returned.count, stages[0].returned)
        assert.equal(returned.groups[0].key.exception, CONSUMER_EXCEPTION)
        assert.equal((report.counts as {redriven: number}).redriven, 4)
        // Every id is on the DLQ again: the 16 never moved and the 4 the consumer failed back.
        await until('the 4 moved to come back', async () => consumer.failed.length === 4)
        assert.deepEqual(new Set(await dlqIds(q)), new Set(ids))
      } finally {
        await consumer.stop()
      }
    })

    if (broker.countingDlq !== undefined) test('where reading the DLQ costs a delivery: refused without --accept-delivery-cost (nothing read); with it the canary runs and aborts', async (t) => {
      if (!(await broker.available(t))) return
      const q = queues()
      await broker.countingDlq?.(q)
      const ids = await seed(q, 6)
      const refused = await bq(['dlq', 'redrive', q.queue, ...dlqFlags(q), '--yes', '--json', '--canary', '2', '--watch', '1s'])
      assert.equal(refused.code, 2, refused.stderr)
      const error = (jsonOutput(refused.stdout) as {error?: {code: string; message: string}}).error
      assert.equal(error?.code, 'delivery-cost')
      assert.match(error?.message ?? '', /canary.*--accept-delivery-cost/)
      const consumer = await startConsumer({url: broker.url(), queue: q.queue, dlq: q.dlq, fails: () => true})
      try {
        const run = await bq(['dlq', 'redrive', q.queue, ...dlqFlags(q), '--yes', '--json', '--canary', '2', '--watch', '1s', '--abort-at', '50%', '--accept-delivery-cost'])
        assert.equal(run.code, CANARY_ABORTED, run.stderr)
        const stages = result(run).stages as Array<{moved: number; returned: number}>
        assert.deepEqual(stages.map((stage) => [stage.moved, stage.returned]), [[2, 2]])
        await until('the 2 moved to come back', async () => consumer.failed.length === 2)
      } finally {
        await consumer.stop()
      }
      // Such a DLQ cannot be listed without spending deliveries: its depth says every message is there.
      const adapter = await openBroker(broker.url())
      try {
        assert.equal(await adapter.count(q.dlq), ids.length)
      } finally {
        await adapter.close()
      }
    })

    if (wanted('ramp')) test('a consumer failing none: the stages ramp until every message moved; the dry run prints the plan and runs show lists the stages', async (t) => {
      if (!(await broker.available(t))) return
      const q = queues()
      await seed(q, 14)
      const plan = result(await bq(['dlq', 'redrive', q.queue, ...dlqFlags(q), '--dry-run', '--json', '--canary', '3', '--ramp', '3', ...(broker.readFlags ?? [])]))
      assert.deepEqual((plan.canary_plan as {stages: number[]}).stages, [3, 9, 2])
      const consumer = await startConsumer({url: broker.url(), queue: q.queue, dlq: q.dlq, fails: () => false})
      try {
        const run = await bq(redriveArgs(q, ['--canary', '3', '--ramp', '3', '--watch', '1s']))
        assert.equal(run.code, 0, run.stderr)
        const report = result(run)
        const stages = report.stages as Array<{size: number; moved: number; returned: number}>
        assert.deepEqual(stages.map((s) => s.moved), [3, 9, 2])
        assert.ok(stages.every((s) => s.returned === 0))
        assert.equal((report.returned as {count: number}).count, 0)
        await until('the consumer to take all 14', async () => consumer.acked.length === 14)
        assert.deepEqual(await dlqIds(q), [])
        const shown = result(await runBq(['runs', 'show', report.run_id as string, '--json'], {env: env()}))
        assert.deepEqual((shown.stages as Array<{moved: number}>).map((s) => s.moved), [3, 9, 2])
      } finally {
        await consumer.stop()
      }
    })

    if (wanted('share')) test('a consumer failing 1 in 50 with --abort-at 10%: the canary completes and reports the returned ones', async (t) => {
      if (!(await broker.available(t))) return
      const q = queues()
      const ids = await seed(q, 100)
      const consumer = await startConsumer({url: broker.url(), queue: q.queue, dlq: q.dlq, fails: (i) => i % 50 === 49})
      try {
        const run = await bq(redriveArgs(q, ['--canary', '10', '--ramp', '10', '--watch', '2s', '--abort-at', '10%']))
        assert.equal(run.code, 0, run.stderr)
        const report = result(run)
        assert.deepEqual((report.stages as Array<{moved: number}>).map((s) => s.moved), [10, 90])
        const returned = report.returned as {count: number; ids: string[]}
        assert.equal(returned.count, 2)
        assert.deepEqual(new Set(returned.ids), new Set(consumer.failed))
        assert.ok(returned.ids.every((id) => ids.includes(id)))
        assert.deepEqual(new Set(await dlqIds(q)), new Set(consumer.failed))
      } finally {
        await consumer.stop()
      }
    })

    if (wanted('guard')) test('the loop guard: dlq inspect shows what was redriven before; --max-redrives leaves those on the DLQ as looping; without it one line says how many', async (t) => {
      if (!(await broker.available(t))) return
      const q = queues()
      const first = await seed(q, 6)
      const failing = new Set(first.slice(0, 3))
      const consumer = await startConsumer({url: broker.url(), queue: q.queue, dlq: q.dlq, fails: (_, id) => failing.has(id)})
      try {
        const firstRun = await bq(redriveArgs(q, []))
        assert.equal(firstRun.code, 0, firstRun.stdout + firstRun.stderr)
        await until('3 to come back', async () => consumer.failed.length === 3 && consumer.acked.length === 3)
        const inspect = result(await bq(['dlq', 'inspect', q.queue, ...dlqFlags(q), '--json']))
        assert.deepEqual(inspect.redriven_before, {messages: 3, by_times: [{times: 1, messages: 3}]})
        const groups = inspect.groups as Array<{redriven_before: number; most_redrives: number}>
        assert.deepEqual(groups.map((g) => [g.redriven_before, g.most_redrives]), [[3, 1]])
        const fresh = await seed(q, 2)
        const guarded = result(await bq(redriveArgs(q, ['--max-redrives', '1'])))
        assert.equal((guarded.counts as {looping: number}).looping, 3)
        assert.equal((guarded.counts as {redriven: number}).redriven, 2)
        await until('the 2 fresh ones to be taken', async () => fresh.every((id) => consumer.acked.includes(id)))
      } finally {
        await consumer.stop()
      }
      assert.deepEqual(new Set(await dlqIds(q)), failing)
      // Without the flag they move, and one line says they had been redriven before.
      const run = await bq(redriveArgs(q, []))
      assert.equal(run.code, 0, run.stderr)
      assert.equal(result(run).redriven_before, 3)
      assert.equal(run.stderr.split('\n').filter((line) => line.includes('had been redriven before')).length, 1, run.stderr)
    })

    if (wanted('passing')) test('--registry --only-passing moves only messages that pass their schema; dlq inspect --registry counts them per group', async (t) => {
      if (!(await broker.available(t))) return
      const q = queues()
      // Every third message has a string amount: the schema wants an integer.
      const ids = await seed(q, 9, (i) => (i % 3 === 0 ? `{"order_id":${i + 1},"amount_cents":"12.50"}` : `{"order_id":${i + 1},"amount_cents":${i}}`))
      const invalid = ids.filter((_, i) => i % 3 === 0)
      const inspect = result(await bq(['dlq', 'inspect', q.queue, ...dlqFlags(q), '--registry', registry, '--json']))
      const group = (inspect.groups as Array<{passing: number; first_failing_rule: string}>)[0]
      assert.equal(group.passing, 6)
      assert.match(group.first_failing_rule, /amount_cents/)
      const run = result(await bq(redriveArgs(q, ['--registry', registry, '--only-passing', '--canary', '2', '--watch', '1s'])))
      assert.equal((run.counts as {redriven: number}).redriven, 6)
      assert.equal((run.counts as {still_invalid: number}).still_invalid, 3)
      assert.deepEqual(new Set(await dlqIds(q)), new Set(invalid))
    })

    if (wanted('signals')) test('SIGTERM during a watch and SIGKILL at random moments: every meta.id is on the DLQ or the target after dlq recover (once where the move is atomic)', async (t) => {
      if (!(await broker.available(t))) return
      /** A queue's depth; one a redrive has not created yet holds none. */
      const countOf = async (adapter: Awaited<ReturnType<typeof openBroker>>, queue: string) => {
        try {
          return await adapter.count(queue)
        } catch (error) {
          if (error instanceof QueueNotFoundError) return 0
          throw error
        }
      }
      /** Every id on the DLQ and on the target queue, with repeats. */
      const census = async (q: {queue: string; dlq: string}) => {
        const adapter = await openBroker(broker.url())
        try {
          const ids: string[] = []
          for (const queue of [q.dlq, q.queue]) {
            const depth = await countOf(adapter, queue)
            if (depth === 0) continue
            for (const message of await adapter.browse(queue, {offset: 0, limit: depth + 10})) ids.push(JSON.parse(message.body.toString('utf8')).meta.id as string)
          }
          return ids
        } finally {
          await adapter.close()
        }
      }
      const q = queues()
      const ids = await seed(q, 20)
      const {child, done} = startBq([...redriveArgs(q, ['--canary', '5', '--watch', '30s']), '-b', broker.url()], {env: env()})
      const probe = await openBroker(broker.url())
      try {
        await until('stage 1 to move 5', async () => (await countOf(probe, q.queue)) === 5)
      } catch (error) {
        child.kill('SIGKILL')
        throw error
      } finally {
        await probe.close()
      }
      // Stage 1 moved; its 30 s watch has begun.
      await new Promise((resolve) => setTimeout(resolve, 300))
      child.kill('SIGTERM')
      const stopped = await done
      assert.equal(stopped.code, 143, stopped.stderr)
      const report = result(stopped)
      assert.deepEqual((report.stages as Array<{moved: number}>).map((s) => s.moved), [5])
      const after = await census(q)
      assert.equal(after.length, ids.length)
      assert.deepEqual(new Set(after), new Set(ids))
      // SIGKILL mid-stage or mid-watch, three times, at different moments.
      for (const delay of [350, 900, 1700]) {
        const k = queues()
        const all = await seed(k, 300)
        const kill = startBq([...redriveArgs(k, ['--canary', '10', '--ramp', '2', '--watch', '1s']), '-b', broker.url()], {env: env()})
        await new Promise((resolve) => setTimeout(resolve, delay))
        kill.child.kill('SIGKILL')
        await kill.done
        assert.equal((await bq(['dlq', 'recover', k.queue, ...dlqFlags(k), '--json'])).code, 0)
        const left = await census(k)
        if (broker.atLeastOnce) assert.ok(left.length >= all.length, `killed after ${delay} ms`)
        else assert.equal(left.length, all.length, `killed after ${delay} ms`)
        assert.deepEqual(new Set(left), new Set(all))
      }
    })

    if (wanted('terminal')) test('on a terminal: the stage summary, the watch status line with its countdown, the returned groups and the abort', {skip: !hasScript && 'needs util-linux script'}, async (t) => {
      if (!(await broker.available(t))) return
      const q = queues()
      await seed(q, 4)
      const consumer = await startConsumer({url: broker.url(), queue: q.queue, dlq: q.dlq, fails: () => true})
      try {
        const {code, screen} = await onTerminal(['dlq', 'redrive', q.queue, ...dlqFlags(q), '--canary', '2', '--watch', '5s', '--abort-at', '50%', '--yes', '-b', broker.url()], {env: env()})
        assert.equal(code, CANARY_ABORTED, screen)
        assert.match(screen, /stage 1: 2 examined: 2 moved/)
        assert.match(screen, /stage 1: 2 moved, 0 returned \| watching 5s/)
        assert.match(screen, /stage 1: [12] of 2 moved came back within \d+s/)
        assert.match(screen, new RegExp(CONSUMER_EXCEPTION.replace('.', '\\.')))
        assert.match(screen, /canary aborted: stage 1/)
      } finally {
        await consumer.stop()
      }
    })

    if (wanted('context')) test('a context\'s --ledger is where its runs are recorded and what the loop guard reads', async (t) => {
      if (!(await broker.available(t))) return
      const q = queues()
      const ids = await seed(q, 3)
      const shared = path.join(workDir, `team-${q.queue}.db`)
      // $BQ_LEDGER empty: the context decides (a set one would win).
      const teamEnv = {XDG_CONFIG_HOME: path.join(workDir, `config-${q.queue}`), BQ_LEDGER: ''}
      assert.equal((await runBq(['context', 'add', 'team', '-b', broker.url(), '--ledger', shared], {env: teamEnv})).code, 0)
      const consumer = await startConsumer({url: broker.url(), queue: q.queue, dlq: q.dlq, fails: () => true})
      try {
        const run = await runBq(['dlq', 'redrive', q.queue, ...dlqFlags(q), '--context', 'team', '--yes', '--json'], {env: teamEnv})
        assert.equal(run.code, 0, run.stderr)
        await until('the 3 to come back', async () => consumer.failed.length === 3)
      } finally {
        await consumer.stop()
      }
      const listed = result(await runBq(['runs', 'list', '--json'], {env: {BQ_LEDGER: shared}}))
      assert.equal((listed.runs as unknown[]).length, 1)
      const inspect = result(await runBq(['dlq', 'inspect', q.queue, ...dlqFlags(q), '--context', 'team', '--json'], {env: teamEnv}))
      assert.deepEqual(inspect.redriven_before, {messages: ids.length, by_times: [{times: 1, messages: ids.length}]})
      // The suite's own ledger never saw that run.
      const elsewhere = result(await bq(['dlq', 'inspect', q.queue, ...dlqFlags(q), '--json']))
      assert.equal((elsewhere.redriven_before as {messages: number}).messages, 0)
    })
  })
}
