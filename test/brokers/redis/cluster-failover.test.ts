/**
 * A master of a Redis Cluster dies (SIGKILL) in the middle of a cross-slot redrive of a few
 * thousand dead letters: bq stops with exit 4 and its report, the replica takes over, a rerun
 * finishes, and a census by meta.id finds every message on the target, with no more on it twice
 * than the reports counted as possible duplicates. Runs on its own cluster (7111–7116), which
 * it puts back afterwards (the killed node rejoins as a replica), so cluster.test.ts never sees
 * a failover.
 */
import {after, test} from 'node:test'
import assert from 'node:assert/strict'
import {randomUUID} from 'node:crypto'
import {readFileSync} from 'node:fs'
import path from 'node:path'
import {Redis} from 'ioredis'

import {keySlot} from '../../../src/lib/brokers/redis/cluster.js'
import {hasStackTrace, jsonOutput, runBq, startBq} from '../../support/cli.js'
import {repoRoot} from '../../support/conformance.js'
import {clusterNodes, ensureCluster, killNode, ownerIn, stopCluster, taggedOn, testCluster, urlAvoiding} from './cluster-support.js'

const FIRST = 7111
const MESSAGES = 3000
const exampleLine = readFileSync(path.join(repoRoot, 'examples', 'orders.dlq.jsonl'), 'utf8').split('\n')[0]

// This file's cluster is its own (a master is killed): it goes when the file ends.
after(() => stopCluster(FIRST))

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Report {
  counts: {examined: number; redriven: number; failed: number}
  possible_duplicates?: number
}

/** Waits until `port` says the cluster is ok and a live master serves `slot`. */
async function untilServed(port: number, slot: number, deadPort: number): Promise<void> {
  const client = new Redis({host: '127.0.0.1', port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0})
  await client.connect()
  try {
    for (let i = 0; i < 300; i++) {
      const info = (await client.call('CLUSTER', 'INFO')) as string
      const nodes = await clusterNodes(port)
      const owner = nodes.find((node) => node.role === 'master' && node.slots.some(([a, b]) => slot >= a && slot <= b))
      if (/cluster_state:ok/.test(info) && owner !== undefined && owner.port !== deadPort) return
      await sleep(100)
    }
    throw new Error(`slot ${slot} was not served again within 30 s`)
  } finally {
    client.disconnect()
  }
}

for (const crossSlot of [true, false]) {
  const kind = crossSlot ? 'a cross-slot redrive (at least once)' : 'a same-slot redrive (one script per batch)'
  test(`a master killed mid-way through ${kind}: exit 4 with the report, a rerun finishes, nothing lost`, {timeout: 120_000}, async (t) => {
  if (!(await ensureCluster(t, FIRST))) return
  const nodes = await clusterNodes(FIRST)
  const masters = nodes.filter((node) => node.role === 'master')
  const [victim, targetOwner] = masters
  const queue = taggedOn(nodes, victim.port, `failover-${Date.now().toString(36)}`)
  const dlq = `${queue}.dlq`
  // Cross-slot: the target is on another master; same-slot: the queue itself. bq talks to a third master.
  const sandbox = crossSlot ? taggedOn(nodes, targetOwner.port, `failover-sandbox-${Date.now().toString(36)}`) : queue
  assert.equal(ownerIn(nodes, dlq).port, victim.port)
  const url = urlAvoiding(nodes, dlq, sandbox)
  const livePort = Number(new URL(url).port)

  const ids: string[] = []
  let cluster = await testCluster(livePort)
  try {
    const bodies: string[] = []
    for (let i = 0; i < MESSAGES; i++) {
      const id = randomUUID()
      ids.push(id)
      bodies.push(exampleLine.replace(/"meta":\{"id":"[^"]+"/, `"meta":{"id":"${id}"`).replace('"original_queue":"orders"', `"original_queue":"${queue}"`))
    }
    for (let i = 0; i < bodies.length; i += 500) await cluster.rpush(dlq, ...bodies.slice(i, i + 500))

    // Slowed down so the kill lands mid-run.
    const to = crossSlot ? ['--to', sandbox] : []
    const first = startBq(['dlq', 'redrive', queue, ...to, '--rate', '400', '--yes', '--json', '-b', url], {timeoutMs: 60_000})
    while (first.child.exitCode === null && (await cluster.llen(sandbox)) < 600) await sleep(50)
    assert.equal(first.child.exitCode, null, 'the redrive ended before the kill')
    killNode(FIRST, victim.port)
    const stopped = await first.done
    assert.ok(!hasStackTrace(stopped.stderr), stopped.stderr)
    assert.equal(stopped.code, 4, stopped.stdout + stopped.stderr)
    const output = jsonOutput(stopped.stdout)
    assert.ok(!output.ok)
    assert.ok(output.result !== undefined, 'the failed run still reports what it did')
    const firstReport = output.result as unknown as Report
    assert.ok(firstReport.counts.redriven > 0 && firstReport.counts.redriven < MESSAGES, JSON.stringify(firstReport.counts))

    // The replica takes over; then the same command finishes the job.
    await untilServed(livePort, keySlot(dlq), victim.port)
    const rerun = await runBq(['dlq', 'redrive', queue, ...to, '--yes', '--json', '-b', url], {timeoutMs: 60_000})
    assert.equal(rerun.code, 0, rerun.stdout + rerun.stderr)
    const secondReport = jsonOutput(rerun.stdout).result as unknown as Report
    const reported = (firstReport.possible_duplicates ?? 0) + (secondReport.possible_duplicates ?? 0)

    // Census by meta.id on a fresh client (the old one knew the dead master).
    cluster.disconnect()
    cluster = await testCluster(livePort)
    const seen = new Map<string, number>()
    for (const body of await cluster.lrange(sandbox, 0, -1)) {
      const id = (JSON.parse(body) as {meta: {id: string}}).meta.id
      seen.set(id, (seen.get(id) ?? 0) + 1)
    }
    const missing = ids.filter((id) => !seen.has(id))
    const duplicates = [...seen.values()].reduce((sum, n) => sum + n - 1, 0)
    const left = (await cluster.llen(dlq)) + (await cluster.llen(`${dlq}:processing`)) + (await cluster.llen(`${dlq}:bq-held`))
    t.diagnostic(`${kind}: sent ${MESSAGES}; first run redriven ${firstReport.counts.redriven}, possible_duplicates ${firstReport.possible_duplicates ?? 0}; rerun redriven ${secondReport.counts.redriven}; seen ${seen.size} distinct, missing ${missing.length}, duplicates ${duplicates}, left on the DLQ ${left}`)
    assert.equal(missing.length, 0, `lost: ${missing.slice(0, 5).join(', ')}`)
    assert.equal(left, 0)
    assert.ok(duplicates <= reported, `${duplicates} duplicate(s) on the target, ${reported} reported`)
    await cluster.del(sandbox)
  } finally {
    cluster.disconnect()
    // The killed node comes back as a replica of the one that took over: the cluster is whole again.
    await ensureCluster(t, FIRST)
  }
  })
}

test('a cluster that is down (a master and its replica gone) is exit 4 with one line', {timeout: 90_000}, async (t) => {
  if (!(await ensureCluster(t, FIRST))) return
  const nodes = await clusterNodes(FIRST)
  const [gone, alive] = nodes.filter((node) => node.role === 'master')
  const replica = nodes.find((node) => node.master === gone.id)!
  const queue = taggedOn(nodes, alive.port, `down-${Date.now().toString(36)}`)
  try {
    killNode(FIRST, gone.port)
    killNode(FIRST, replica.port)
    // Every slot is refused once the others have marked the shard failed (full coverage is required).
    const probe = new Redis({host: '127.0.0.1', port: alive.port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0})
    await probe.connect()
    try {
      while (!/cluster_state:fail/.test((await probe.call('CLUSTER', 'INFO')) as string)) await sleep(100)
    } finally {
      probe.disconnect()
    }
    const run = await runBq(['peek', queue, '-b', `redis://127.0.0.1:${alive.port}`])
    assert.equal(run.code, 4, run.stdout + run.stderr)
    assert.ok(!hasStackTrace(run.stderr), run.stderr)
    assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr)
    assert.match(run.stderr, /CLUSTERDOWN/)
  } finally {
    await ensureCluster(t, FIRST)
  }
})
