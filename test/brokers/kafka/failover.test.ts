// @test-uses private-jvm: starts a three-node Kafka cluster of its own and SIGKILLs its nodes; one such file at a time
/**
 * Kafka leader elections: a three-node KRaft cluster (test/brokers/kafka/cluster.sh, topics at
 * replication factor 3 with min.insync.replicas=2) loses a node to SIGKILL while bq works, and bq
 * rides through the election (kafka/client/retry.ts):
 *
 * (a) the leader of the target's partition killed mid-redrive: exit 0, every meta.id on the
 *     target, duplicates at most the report's possible_duplicates;
 * (b) the group coordinator of bq's redrive lock (lease) group killed mid-redrive: the same;
 * (c) the target's leader killed mid-publish: exit 0, every id on the topic, none twice (the
 *     idempotent producer's resends to the new leader write nothing again);
 * (d) two of three nodes killed mid-redrive (below min.insync.replicas, and no controller quorum):
 *     exit 4 with the report within the timeout (--timeout 8), nothing lost, and once the nodes are
 *     back a rerun finishes.
 *
 * The file starts the cluster itself (and stops and deletes it if it started it): no other test
 * uses it, and three more JVMs running through the whole suite would cost every other test
 * memory on a 2-core machine. Killed nodes are restarted, and every replica back in sync, before
 * the next trial.
 */
import assert from 'node:assert/strict'
import {execFile} from 'node:child_process'
import path from 'node:path'
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'

import kafkajs, {type Admin} from 'kafkajs'

import type {BrokerAdapter} from '../../../src/lib/brokers/adapter.js'
import {leaseGroup} from '../../../src/lib/brokers/kafka/lease.js'
import {openBroker} from '../../../src/lib/brokers/registry.js'
import {underCI, uniqueQueue} from '../../support/brokers.js'
import {hasStackTrace, jsonOutput, startBq, type CliResult} from '../../support/cli.js'
import {repoRoot} from '../../support/conformance.js'
import {census, seed} from '../../suites/crash-suite.js'

const {Kafka, logLevel} = kafkajs
const script = path.join(repoRoot, 'test', 'brokers', 'kafka', 'cluster.sh')
/** Enough dead letters that a kill at a fifth of them (about 1.5 s in) lands mid-run. */
const REDRIVE_MESSAGES = 5000
const PUBLISH_MESSAGES = 20_000
/** (d): a short operation timeout, so giving up is quick; still longer than this cluster's election (about 3 s). */
const SHORT_TIMEOUT_S = 8
/** Node and oclif start-up, the report, a loaded 2-core machine. */
const SLACK_MS = 15_000

let bootstrap = ''
let startedHere = false
let startError: unknown
const timings: string[] = []

function cluster(...args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('bash', [script, ...args], {timeout: 240_000, maxBuffer: 4 * 1024 * 1024}, (error, stdout, stderr) => {
      if (error) reject(new Error(`cluster.sh ${args.join(' ')} failed: ${stderr || stdout || error.message}`))
      else resolve(stdout.trim())
    })
  })
}

const url = () => `kafka://${bootstrap}`

before(async () => {
  const started = Date.now()
  try {
    startedHere = !(await cluster('status').then(() => true, () => false))
    await cluster('start')
    bootstrap = await cluster('bootstrap')
    timings.push(`cluster start ${((Date.now() - started) / 1000).toFixed(1)} s${startedHere ? '' : ' (already running)'}`)
  } catch (error) {
    startError = error
  }
}, {timeout: 240_000})

after(async () => {
  if (startedHere) await cluster('clean').catch(() => undefined)
  if (timings.length > 0) console.log(`# Kafka failover: ${timings.join(', ')}`)
})

/** True when the cluster runs; a skip (a failure under CI) when it could not start. */
function clusterUp(t: TestContext): boolean {
  if (bootstrap !== '') return true
  const reason = `the three-node Kafka cluster could not start: ${startError instanceof Error ? startError.message : String(startError)}`
  if (underCI) throw new Error(`${reason} (CI=true: integration tests must not be skipped)`)
  t.skip(reason)
  return false
}

async function withAdmin<T>(work: (admin: Admin) => Promise<T>): Promise<T> {
  const admin = new Kafka({brokers: bootstrap.split(','), clientId: 'bq-failover-test', logLevel: logLevel.NOTHING, retry: {retries: 3}}).admin()
  await admin.connect()
  try {
    return await work(admin)
  } finally {
    await admin.disconnect().catch(() => undefined)
  }
}

async function withAdapter<T>(work: (adapter: BrokerAdapter) => Promise<T>): Promise<T> {
  const adapter = await openBroker(url())
  try {
    return await work(adapter)
  } finally {
    await adapter.close().catch(() => undefined)
  }
}

/** The node leading a partition, as the cluster's metadata says now. */
async function leaderOf(topic: string, partition = 0): Promise<number> {
  return withAdmin(async (admin) => {
    const [meta] = (await admin.fetchTopicMetadata({topics: [topic]})).topics
    return meta.partitions.find((p) => p.partitionId === partition)!.leader
  })
}

/** Kafka's own hash of a group id (Java's String.hashCode), which picks its __consumer_offsets partition. */
function javaHash(text: string): number {
  let hash = 0
  for (let i = 0; i < text.length; i++) hash = (Math.imul(31, hash) + text.charCodeAt(i)) | 0
  return hash
}

/** The node coordinating a consumer group: the leader of its __consumer_offsets partition. */
async function coordinatorOf(group: string): Promise<number> {
  return withAdmin(async (admin) => {
    const [meta] = (await admin.fetchTopicMetadata({topics: ['__consumer_offsets']})).topics
    const hash = javaHash(group)
    const partition = (hash === -2_147_483_648 ? 0 : Math.abs(hash)) % meta.partitions.length
    return meta.partitions.find((p) => p.partitionId === partition)!.leader
  })
}

/** Records in a topic (sum of its high watermarks): how far a run has got. */
async function written(admin: Admin, topic: string): Promise<number> {
  try {
    return (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high), 0)
  } catch {
    return 0
  }
}

/** Until every partition of these topics (and of the group offsets) has a leader and all three replicas in sync. */
async function waitInSync(topics: string[]): Promise<void> {
  const deadline = Date.now() + 90_000
  for (;;) {
    const lagging = await withAdmin(async (admin) => {
      const {topics: metas} = await admin.fetchTopicMetadata({topics: [...topics, '__consumer_offsets']})
      return metas.flatMap((meta) => meta.partitions.filter((p) => p.leader < 0 || p.isr.length < 3).map((p) => `${meta.name}/${p.partitionId}`))
    }).catch((error: unknown) => [String(error)])
    if (lagging.length === 0) return
    if (Date.now() > deadline) throw new Error(`not back in sync within 90 s: ${lagging.join(', ')}`)
    await new Promise((resolve) => setTimeout(resolve, 300))
  }
}

async function createTopics(topics: string[]): Promise<void> {
  await withAdmin((admin) => admin.createTopics({topics: topics.map((topic) => ({topic, numPartitions: 1, replicationFactor: 3})), waitForLeaders: true}))
}

/**
 * Starts bq, SIGKILLs the nodes `victims` names once `threshold` records reached `watched`, and
 * waits for bq. `restarted` then starts the nodes again and waits until every replica is in sync
 * (the census runs meanwhile, on the nodes left).
 */
async function killMidRun(args: string[], watched: string, threshold: number, victims: () => Promise<number[]>, insync: string[]) {
  const started = Date.now()
  const run = startBq(args, {timeoutMs: 180_000})
  let finished: CliResult | undefined
  void run.done.then((result) => (finished = result))
  const nodes = await victims()
  await withAdmin(async (admin) => {
    const deadline = Date.now() + 60_000
    while ((await written(admin, watched)) < threshold) {
      if (finished !== undefined) throw new Error(`bq ended before ${threshold} records reached ${watched}: ${JSON.stringify(finished).slice(0, 600)}`)
      if (Date.now() > deadline) throw new Error(`fewer than ${threshold} records reached ${watched} within 60 s`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  })
  const at = Date.now() - started
  for (const node of nodes) await cluster('kill', String(node))
  const killed = Date.now()
  const result = await run.done
  const endedAfterKillMs = Date.now() - killed
  return {result, nodes, killedAtMs: at, endedAfterKillMs, restarted: () => restartNodes(nodes, insync)}
}

async function restartNodes(nodes: number[], insync: string[]): Promise<void> {
  const back = Date.now()
  await Promise.all(nodes.map((node) => cluster('restart', String(node))))
  await waitInSync(insync)
  timings.push(`node(s) ${nodes.join('+')} back in sync ${((Date.now() - back) / 1000).toFixed(1)} s`)
}

const redriveArgs = (queue: string, extra: string[] = []) => ['dlq', 'redrive', queue, '--yes', '--json', '-b', url(), ...extra]

/** Every seeded meta.id on the target; duplicates within what the reports allowed. */
async function assertCensus(t: TestContext, queue: string, ids: Set<string>, allowed: number) {
  const seen = await withAdapter((adapter) => census(adapter, [queue]))
  const missing = [...ids].filter((id) => !seen.has(id))
  const duplicates = [...seen.values()].reduce((sum, n) => sum + n - 1, 0)
  t.diagnostic(`census: ${ids.size} sent, ${seen.size} distinct seen, ${missing.length} missing, ${duplicates} duplicate(s), reported possible ${allowed}`)
  assert.deepEqual(missing.slice(0, 5), [], `${missing.length} meta.id(s) not on the target`)
  assert.ok(duplicates <= allowed, `${duplicates} duplicate(s), the report allowed ${allowed}`)
}

function possibleDuplicates(result: CliResult): number {
  const output = jsonOutput(result.stdout)
  return ((output.result as {possible_duplicates?: number} | undefined)?.possible_duplicates) ?? 0
}

/** Seeds `<queue>.dlq` on a fresh pair of topics at replication factor 3. */
async function seeded(prefix: string): Promise<{queue: string; dlq: string; ids: Set<string>}> {
  const queue = uniqueQueue(prefix)
  const dlq = `${queue}.dlq`
  await createTopics([queue, dlq])
  const ids = await withAdapter((adapter) => seed(adapter, queue, dlq, REDRIVE_MESSAGES))
  return {queue, dlq, ids}
}

describe('Kafka failover (three KRaft nodes, replication factor 3, min.insync.replicas=2)', () => {
  /** (a), (b): a redrive of a fresh DLQ with one node killed mid-run; nodes restarted while the census runs. */
  const redriveRidesThrough = async (t: TestContext, prefix: string, victim: (queue: string, dlq: string) => Promise<number>, what: string) => {
    const {queue, dlq, ids} = await seeded(prefix)
    const run = await killMidRun(redriveArgs(dlq), queue, REDRIVE_MESSAGES / 5, async () => [await victim(queue, dlq)], [queue, dlq])
    const restarting = run.restarted()
    try {
      t.diagnostic(`killed node ${run.nodes.join(', ')} (${what}) ${run.killedAtMs} ms into the redrive; bq exited ${run.result.code} ${run.endedAfterKillMs} ms after the kill`)
      assert.equal(run.result.code, 0, run.result.stderr + run.result.stdout.slice(0, 1000))
      await assertCensus(t, queue, ids, possibleDuplicates(run.result))
    } finally {
      await restarting
    }
  }

  test(`(a) the target partition's leader SIGKILLed mid-redrive of ${REDRIVE_MESSAGES}: exit 0, nothing lost, duplicates only as reported`, {timeout: 200_000}, async (t) => {
    if (!clusterUp(t)) return
    await redriveRidesThrough(t, 'failover-leader', (queue) => leaderOf(queue), 'leader of the target partition')
  })

  test(`(b) the coordinator of the redrive lock group SIGKILLed mid-redrive of ${REDRIVE_MESSAGES}: exit 0, nothing lost, duplicates only as reported`, {timeout: 200_000}, async (t) => {
    if (!clusterUp(t)) return
    await redriveRidesThrough(t, 'failover-coord', (_queue, dlq) => coordinatorOf(leaseGroup(dlq)), 'coordinator of the lock group')
  })

  test(`(c) the target partition's leader SIGKILLed mid-publish of ${PUBLISH_MESSAGES}: exit 0, every id stored, none twice`, {timeout: 200_000}, async (t) => {
    if (!clusterUp(t)) return
    const queue = uniqueQueue('failover-publish')
    await createTopics([queue])
    const args = ['publish', 'urn:babel:orders:created', '-q', queue, '-d', '{"order_id":1}', '--count', String(PUBLISH_MESSAGES), '--json', '-b', url()]
    const run = await killMidRun(args, queue, PUBLISH_MESSAGES / 10, async () => [await leaderOf(queue)], [queue])
    const restarting = run.restarted()
    try {
      t.diagnostic(`killed node ${run.nodes.join(', ')} ${run.killedAtMs} ms into the publish; bq exited ${run.result.code} ${run.endedAfterKillMs} ms after the kill`)
      assert.equal(run.result.code, 0, run.result.stderr + run.result.stdout.slice(0, 1000))
      const ids = new Set(((jsonOutput(run.result.stdout).result as {ids?: string[]} | undefined)?.ids) ?? [])
      assert.equal(ids.size, PUBLISH_MESSAGES)
      await assertCensus(t, queue, ids, 0)
    } finally {
      await restarting
    }
  })

  test(`(d) two of three nodes SIGKILLed mid-redrive: exit 4 with the report within --timeout ${SHORT_TIMEOUT_S}, nothing lost; a rerun after the restart finishes`, {timeout: 200_000}, async (t) => {
    if (!clusterUp(t)) return
    const {queue, dlq, ids} = await seeded('failover-quorum')
    const victims = async () => {
      const leader = await leaderOf(queue)
      return [leader, [1, 2, 3].find((node) => node !== leader)!]
    }
    const run = await killMidRun(redriveArgs(dlq, ['--timeout', String(SHORT_TIMEOUT_S)]), queue, REDRIVE_MESSAGES / 5, victims, [queue, dlq])
    const {result} = run
    let restarted = false
    try {
      t.diagnostic(`killed nodes ${run.nodes.join(', ')} ${run.killedAtMs} ms into the redrive; bq exited ${result.code} ${run.endedAfterKillMs} ms after the kill`)
      assert.equal(result.code, 4, result.stderr + result.stdout.slice(0, 1000))
      assert.ok(!hasStackTrace(result.stderr + result.stdout), `no stack trace: ${result.stderr}`)
      const output = jsonOutput(result.stdout)
      assert.equal(output.ok, false)
      if (output.ok) return
      assert.equal(output.error.code, 'connection', output.error.message)
      assert.doesNotMatch(output.error.message, /\n/, 'one line')
      const report = output.result as {counts?: {redriven?: number}; possible_duplicates?: number} | undefined
      assert.ok(report !== undefined, `the error carries the report: ${result.stdout.slice(0, 500)}`)
      // The operation in flight gets the timeout; the release and close after the loss a short grace each.
      const bound = 2 * SHORT_TIMEOUT_S * 1000 + SLACK_MS
      assert.ok(run.endedAfterKillMs < bound, `gave up ${run.endedAfterKillMs} ms after the kill (bound ${bound} ms)`)
      t.diagnostic(`${output.error.message}; report: ${report.counts?.redriven ?? 0} moved, possible_duplicates ${report.possible_duplicates ?? 0}`)
      await run.restarted()
      restarted = true
      const rerun = await startBq(redriveArgs(dlq), {timeoutMs: 180_000}).done
      assert.equal(rerun.code, 0, rerun.stderr + rerun.stdout.slice(0, 1000))
      await assertCensus(t, queue, ids, possibleDuplicates(result) + possibleDuplicates(rerun))
    } finally {
      if (!restarted) await run.restarted()
    }
  })
})
