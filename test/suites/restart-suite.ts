/**
 * Real broker restarts: the broker process (a private instance, test/support/own-broker.ts) is
 * SIGKILLed while bq works, then started again on the same data. Brokers that keep their data on
 * disk (Kafka, Artemis, Pulsar) must come back with everything bq was told was written.
 *
 * - mid-redrive, broker back at once: bq finishes (it reconnected) or exits 4 with a one-line
 *   error and its report; a rerun finishes; every meta.id is on the target, duplicates at most the
 *   report's possible_duplicates.
 * - mid-publish (`publish --count`), broker back at once: every id bq reported as published is on
 *   the queue; where the producer is idempotent (Kafka), none twice.
 * - mid-publish, broker not back: exit 4 within the documented timeouts, one line naming the
 *   broker (no password), the report of what was confirmed; once the broker is back, all of it
 *   is there.
 *
 * Each of test/brokers/{kafka,artemis,pulsar}/restart.test.ts calls `restartSuite`; one instance
 * serves all tests of a file (Pulsar standalone takes most of a minute to start).
 */
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'

import type {BrokerAdapter} from '../../src/lib/brokers/adapter.js'
import {openBroker} from '../../src/lib/brokers/registry.js'
import {QueueNotFoundError} from '../../src/lib/errors.js'
import {DEFAULT_CONNECT_SECONDS, DEFAULT_OPERATION_SECONDS} from '../../src/lib/brokers/shared/timeouts.js'
import {underCI, uniqueQueue} from '../support/brokers.js'
import {hasStackTrace, jsonOutput, startBq, type CliResult} from '../support/cli.js'
import {OwnBroker, type OwnBrokerName} from '../support/own-broker.js'
import {census, seed} from './crash-suite.js'

export interface RestartCase {
  /** As bq's messages name the broker (`Kafka`). */
  name: string
  broker: OwnBrokerName
  /** Messages in the DLQ a redrive moves when the broker is killed. */
  redriveMessages: number
  /** Messages `publish --count` sends: enough that the kill lands mid-run. */
  publishMessages: number
  /** The producer cannot write a record twice within a run (Kafka's idempotent producer). */
  idempotentPublish: boolean
  /** How long a read may wait by design before the operation timeout applies (docs/redrive-guarantees.md: Pulsar 20 s). */
  readIdleMs?: number
}

/** Node and oclif start-up, closing, a loaded 2-core machine. */
const SLACK_MS = 10_000

/** What a broker's own restart tests (beside the suite's) use: the file's instance, and its restart. */
export interface RestartHandle {
  broker: (t: TestContext) => OwnBroker | undefined
  restart: (b: OwnBroker) => Promise<number>
}

export function restartSuite(c: RestartCase): RestartHandle {
  let own: OwnBroker | undefined
  let startError: unknown
  const timings: string[] = []

  before(async () => {
    const started = Date.now()
    try {
      own = await OwnBroker.start(c.broker)
      timings.push(`first start ${((Date.now() - started) / 1000).toFixed(1)} s`)
    } catch (error) {
      startError = error
    }
  }, {timeout: 400_000})
  after(async () => {
    await own?.destroy()
    if (timings.length > 0) console.log(`# ${c.name} restart suite: ${timings.join(', ')}`)
  })

  /** The private instance, or a skip (a failure under CI) when it could not start. */
  const broker = (t: TestContext): OwnBroker | undefined => {
    if (own !== undefined) return own
    const reason = `a private ${c.name} instance could not start: ${startError instanceof Error ? startError.message : String(startError)}`
    if (underCI) throw new Error(`${reason} (CI=true: integration tests must not be skipped)`)
    t.skip(reason)
    return undefined
  }

  const restart = async (b: OwnBroker) => {
    const ms = await b.restart()
    timings.push(`restart ${(ms / 1000).toFixed(1)} s`)
    return ms
  }

  /** Polls a fresh connection until the queue holds `atLeast` messages: the run is well under way. */
  const writesUnderWay = async (b: OwnBroker, queue: string, run: {done: Promise<CliResult>}, atLeast: number) => {
    const adapter = await openBroker(b.url)
    let finished = false
    void run.done.then(() => (finished = true))
    try {
      const deadline = Date.now() + 90_000
      for (;;) {
        const held = await adapter.count(queue).catch((error: unknown) => (error instanceof QueueNotFoundError ? 0 : Promise.reject(error)))
        if (held >= atLeast) return held
        if (finished) throw new Error(`bq ended before ${atLeast} reached ${queue}: ${JSON.stringify(await run.done).slice(0, 500)}`)
        if (Date.now() > deadline) throw new Error(`fewer than ${atLeast} reached ${queue} within 90 s`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
    } finally {
      await adapter.close().catch(() => undefined)
    }
  }

  /** A fault's failure: exit 4, one line naming the broker without its password, the report attached. */
  const assertLostBroker = (result: CliResult) => {
    assert.equal(result.code, 4, result.stderr + result.stdout.slice(0, 1000))
    assert.ok(!hasStackTrace(result.stderr + result.stdout), `no stack trace: ${result.stderr}`)
    const output = jsonOutput(result.stdout)
    assert.equal(output.ok, false)
    if (output.ok) return undefined
    assert.equal(output.error.code, 'connection', output.error.message)
    assert.doesNotMatch(output.error.message, /\n/, 'one line')
    assert.match(output.error.message, new RegExp(c.name, 'i'), 'names the broker')
    assert.doesNotMatch(output.error.message + result.stderr, /bq:bq@/, 'no password')
    return output
  }

  const withAdapter = async <T>(b: OwnBroker, work: (adapter: BrokerAdapter) => Promise<T>): Promise<T> => {
    const adapter = await openBroker(b.url)
    try {
      return await work(adapter)
    } finally {
      await adapter.close().catch(() => undefined)
    }
  }

  const redriveArgs = (queue: string, url: string) => ['dlq', 'redrive', queue, '--yes', '--json', '-b', url]
  const publishArgs = (queue: string, url: string, count: number) => ['publish', 'urn:babel:orders:created', '-q', queue, '-d', '{"order_id":1}', '--count', String(count), '--json', '-b', url]

  /** The ids a publish run reported as confirmed, whether it finished or failed. */
  const reportedIds = (result: CliResult): string[] => {
    const output = jsonOutput(result.stdout)
    return ((output.result as {ids?: string[]} | undefined)?.ids) ?? []
  }

  /** Every reported id on the queue; how many records are there twice. */
  const checkPublished = async (b: OwnBroker, queue: string, ids: string[]) => {
    const seen = await withAdapter(b, (adapter) => census(adapter, [queue]))
    const missing = ids.filter((id) => !seen.has(id))
    assert.deepEqual(missing.slice(0, 5), [], `${missing.length} of ${ids.length} reported id(s) lost`)
    const doubled = [...seen.values()].reduce((sum, n) => sum + n - 1, 0)
    return {doubled, stored: seen.size}
  }

  /** Records stored beyond the reported ones were sent unconfirmed: the error must not call them unpublished. */
  const assertHonestAboutUnconfirmed = (result: CliResult, reported: number, stored: number) => {
    if (result.code === 0 || stored <= reported) return
    const output = jsonOutput(result.stdout)
    if (!output.ok) assert.doesNotMatch(output.error.message, /not published/, `${stored - reported} unconfirmed record(s) were stored: ${output.error.message}`)
  }

  /** Starts bq, SIGKILLs the broker once `threshold` messages are written, starts it again, and waits for bq. */
  const killAndRestartMidRun = async (b: OwnBroker, queue: string, args: string[], threshold: number) => {
    const run = startBq(args, {timeoutMs: 300_000})
    const ended = run.done.then(() => Date.now())
    const progress = await writesUnderWay(b, queue, run, threshold)
    await b.kill()
    const killed = Date.now()
    const restartMs = await restart(b)
    const result = await run.done
    return {progress, endedAfterKillMs: (await ended) - killed, restartMs, result}
  }

  describe(`${c.name} restarts (a private instance, SIGKILLed and started again)`, () => {
    test(`mid-redrive of ${c.redriveMessages}, broker back at once: finishes, or exits 4 with the report and a rerun finishes; nothing lost`, {timeout: 400_000}, async (t) => {
      const b = broker(t)
      if (b === undefined) return
      const queue = uniqueQueue('restart-redrive')
      const ids = await withAdapter(b, (adapter) => seed(adapter, queue, `${queue}.dlq`, c.redriveMessages))
      const {progress: moved, endedAfterKillMs, restartMs, result} = await killAndRestartMidRun(b, queue, redriveArgs(queue, b.url), Math.ceil(c.redriveMessages / 5))
      t.diagnostic(`${c.name}: ${moved} moved at the kill; bq ended ${endedAfterKillMs} ms after it with exit ${result.code}; the broker was back after ${restartMs} ms`)
      let possible = 0
      if (result.code !== 0) {
        const output = assertLostBroker(result)
        const report = output?.result as {counts?: {redriven?: number}; possible_duplicates?: number} | undefined
        assert.ok(report !== undefined, `the error carries the report: ${result.stdout.slice(0, 500)}`)
        possible = report.possible_duplicates ?? 0
        t.diagnostic(`${c.name}: ${output?.error.message}; report: ${report.counts?.redriven ?? 0} moved, possible_duplicates ${possible}`)
        const rerun = await startBq(redriveArgs(queue, b.url), {timeoutMs: 300_000}).done
        assert.equal(rerun.code, 0, rerun.stderr + rerun.stdout.slice(0, 500))
      }
      // The run (or its rerun) finished: every meta.id must be on the target.
      const seen = await withAdapter(b, (adapter) => census(adapter, [queue]))
      const missing = [...ids].filter((id) => !seen.has(id))
      assert.deepEqual(missing.slice(0, 5), [], `${missing.length} meta.id(s) not on the target`)
      const extra = [...seen.values()].reduce((sum, n) => sum + n - 1, 0)
      t.diagnostic(`${c.name}: census ok, ${extra} duplicate(s), report allowed ${possible}`)
      assert.ok(extra <= possible, `${extra} duplicate(s), the report allowed ${possible}`)
    })

    test(`mid-publish of ${c.publishMessages}, broker back at once: every reported id stored${c.idempotentPublish ? ', none twice' : ''}`, {timeout: 400_000}, async (t) => {
      const b = broker(t)
      if (b === undefined) return
      const queue = uniqueQueue('restart-publish')
      const {progress: stored, endedAfterKillMs, restartMs, result} = await killAndRestartMidRun(b, queue, publishArgs(queue, b.url, c.publishMessages), Math.ceil(c.publishMessages / 5))
      t.diagnostic(`${c.name}: bq ended ${endedAfterKillMs} ms after the kill with exit ${result.code}; the broker was back after ${restartMs} ms`)
      if (result.code !== 0) assertLostBroker(result)
      const ids = reportedIds(result)
      if (result.code === 0) assert.equal(ids.length, c.publishMessages)
      const {doubled, stored: after} = await checkPublished(b, queue, ids)
      t.diagnostic(`${c.name}: ${stored} stored at the kill; exit ${result.code}, ${ids.length} reported, ${after} distinct stored, ${doubled} twice`)
      assertHonestAboutUnconfirmed(result, ids.length, after)
      if (c.idempotentPublish) assert.equal(doubled, 0, 'no record written twice within one run')
    })

    test(`mid-publish, broker not back: exit 4 within the documented timeouts, one line naming ${c.name}, the report; nothing reported is lost`, {timeout: 400_000}, async (t) => {
      const b = broker(t)
      if (b === undefined) return
      // A broker whose counts lag (Pulsar's admin stats on a loaded machine) can report the
      // threshold only once bq has every confirmation: that kill missed the run. Up to 3
      // attempts, each killing earlier; a missed one must still have stored all it reported.
      let queue = ''
      let result: CliResult | undefined
      let ms = 0
      for (let attempt = 0; attempt < 3; attempt++) {
        queue = uniqueQueue('restart-gone')
        const run = startBq(publishArgs(queue, b.url, c.publishMessages), {timeoutMs: 300_000})
        const underWay = await writesUnderWay(b, queue, run, Math.ceil(c.publishMessages / (5 * 2 ** attempt))).then(
          () => true,
          async (error: unknown) => ((await run.done).code === 0 ? false : Promise.reject(error)),
        )
        if (underWay) await b.kill()
        const killed = Date.now()
        result = await run.done
        ms = Date.now() - killed
        if (result.code !== 0) break
        t.diagnostic(`${c.name}: attempt ${attempt}: bq had finished (exit 0) ${underWay ? 'when the kill landed' : 'before its writes were counted'}; trying again, killing earlier`)
        if (underWay) await restart(b)
        assert.equal(reportedIds(result).length, c.publishMessages, 'a run that finished reported every message')
        const {stored} = await checkPublished(b, queue, reportedIds(result))
        assert.equal(stored, c.publishMessages, 'a run that finished stored every message')
        result = undefined
      }
      assert.ok(result !== undefined, 'in 3 attempts no kill landed while bq published')
      timings.push(`gave up ${(ms / 1000).toFixed(1)} s after the kill`)
      const output = assertLostBroker(result)
      // An operation in flight waits at most its timeout (plus a read's designed idle wait); reconnecting, the connect timeout.
      const bound = (DEFAULT_OPERATION_SECONDS + DEFAULT_CONNECT_SECONDS) * 1000 + (c.readIdleMs ?? 0) + SLACK_MS
      assert.ok(ms < bound, `gave up after ${ms} ms (bound ${bound} ms)`)
      const ids = reportedIds(result)
      t.diagnostic(`${c.name}: exit 4 ${ms} ms after the kill: ${output?.error.message}; ${ids.length} reported`)
      await restart(b)
      const {doubled, stored} = await checkPublished(b, queue, ids)
      t.diagnostic(`${c.name}: after the restart ${stored} distinct stored, ${doubled} twice`)
      assertHonestAboutUnconfirmed(result, ids.length, stored)
      if (c.idempotentPublish) assert.equal(doubled, 0, 'no record written twice within one run')
    })
  })
  return {broker, restart}
}
