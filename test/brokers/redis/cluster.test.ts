/**
 * Every bq command on a Redis Cluster (cluster.sh, 7101–7106), through bin/run.js, always pointed
 * at a master that does NOT own the queue's hash slot: MOVED/ASK are the client's business, never
 * the operator's. Same-slot moves stay one script; cross-slot ones (a sandbox, untagged names)
 * take the at-least-once path and say so once.
 */
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import type {Cluster} from 'ioredis'

import {hasStackTrace, jsonOutput, runBq, type JsonOutput} from '../../support/cli.js'
import {repoRoot} from '../../support/conformance.js'
import {clusterNodes, ensureCluster, ownerIn, taggedOn, testCluster, urlAvoiding, type Node} from './cluster-support.js'

const FIRST = 7101
const exampleDlq = readFileSync(path.join(repoRoot, 'examples', 'orders.dlq.jsonl'), 'utf8')
let workDir: string
let nodes: Node[] | undefined
let cluster: Cluster | undefined
let stem = 0

before(() => {
  workDir = mkdtempSync(path.join(tmpdir(), 'bq-redis-cluster-'))
})
after(() => {
  rmSync(workDir, {recursive: true, force: true})
  cluster?.disconnect()
})

async function ready(t: TestContext): Promise<boolean> {
  if (nodes !== undefined) return true
  if (!(await ensureCluster(t, FIRST))) return false
  nodes = await clusterNodes(FIRST)
  cluster = await testCluster(FIRST)
  return true
}

/** A fresh queue stem for one test. */
const fresh = (name: string) => `${name}-${Date.now().toString(36)}${stem++}`

/** The example DLQ with `queue` as every message's original queue. */
function dlqFile(queue: string): string {
  const file = path.join(workDir, `${fresh('dlq')}.jsonl`)
  writeFileSync(file, exampleDlq.replaceAll('"original_queue":"orders"', `"original_queue":${JSON.stringify(queue)}`))
  return file
}

// Every test seeds the same example ids: a ledger per run keeps the loop guard's "redriven
// before" warning (about the previous test's run) out of the warnings each test checks.
const ledgers = mkdtempSync(path.join(tmpdir(), 'bq-cluster-ledgers-'))
after(() => rmSync(ledgers, {recursive: true, force: true}))
let runs = 0

async function bq(args: string[]): Promise<{code: number; out: JsonOutput; stderr: string}> {
  const result = await runBq([...args, '--json'], {env: {BQ_LEDGER: path.join(ledgers, `${++runs}.db`)}})
  assert.ok(!hasStackTrace(result.stderr), result.stderr)
  assert.doesNotMatch(result.stdout + result.stderr, /MOVED|ASK \d|CROSSSLOT/)
  return {code: result.code, out: jsonOutput(result.stdout), stderr: result.stderr}
}

const ok = (out: JsonOutput): Record<string, unknown> => {
  assert.ok(out.ok, JSON.stringify(out))
  return out.result
}

/** Seeds a DLQ with the 4 example dead letters through `bq replay --as-is` via `url`. */
async function seed(url: string, dlq: string, original: string): Promise<void> {
  const seeded = await bq(['replay', dlqFile(original), '--as-is', '--to', dlq, '--yes', '-b', url])
  assert.equal(seeded.code, 0, JSON.stringify(seeded.out))
}

const ids = async (key: string) => (await cluster!.lrange(key, 0, -1)).map((body) => (JSON.parse(body) as {meta: {id: string}}).meta.id).sort()
const EXAMPLE_IDS = [...exampleDlq.matchAll(/"id":"([^"]+)"/g)].map((m) => m[1]).sort()

describe('bq on a Redis Cluster, pointed at a node that does not own the queue', () => {
  test('publish, peek and dlq inspect follow the cluster', async (t) => {
    if (!(await ready(t))) return
    const queue = `{${fresh('pub')}}`
    const url = urlAvoiding(nodes!, queue)
    const published = await bq(['publish', 'urn:babel:orders:created', '-d', '{"order_id":7}', '-q', queue, '-c', '3', '-b', url])
    assert.equal(published.code, 0, JSON.stringify(published.out))
    assert.equal(await cluster!.llen(queue), 3)
    const peek = ok((await bq(['peek', queue, '-b', url])).out)
    assert.equal(peek.depth, 3)
    await seed(url, `${queue}.dlq`, queue)
    const inspect = await bq(['dlq', 'inspect', queue, '-b', url])
    assert.equal(inspect.code, 0, JSON.stringify(inspect.out))
    assert.match(JSON.stringify(ok(inspect.out)), /Payment gateway timeout|GatewayTimeout/)
  })

  test('a same-slot redrive is one script: no warning, nothing on both', async (t) => {
    if (!(await ready(t))) return
    const queue = `{${fresh('same')}}`
    const url = urlAvoiding(nodes!, queue)
    await seed(url, `${queue}.dlq`, queue)
    const run = await bq(['dlq', 'redrive', queue, '--yes', '-b', url])
    assert.equal(run.code, 0, JSON.stringify(run.out))
    const report = ok(run.out) as {counts: {redriven: number}; possible_duplicates?: number}
    assert.equal(report.counts.redriven, 4)
    assert.equal(report.possible_duplicates, undefined)
    assert.deepEqual(run.out.warnings, [])
    assert.deepEqual(await ids(queue), EXAMPLE_IDS)
    assert.equal(await cluster!.llen(`${queue}.dlq`), 0)
    // The staging keys were the binding's own names, in the queue's slot, and are empty now.
    assert.equal(await cluster!.exists(`${queue}.dlq:processing`, `${queue}.dlq:bq-held`, `${queue}.dlq:bq-lock`), 0)
  })

  test('a redrive to a sandbox in another slot is at least once, warned once, counted', async (t) => {
    if (!(await ready(t))) return
    const queue = `{${fresh('cross')}}`
    // The sandbox lives on a third master: source, target and the node bq talks to all differ.
    const sourceOwner = ownerIn(nodes!, queue).port
    const url = urlAvoiding(nodes!, queue)
    const third = nodes!.find((node) => node.role === 'master' && node.port !== sourceOwner && `redis://127.0.0.1:${node.port}` !== url)!.port
    const sandbox = taggedOn(nodes!, third, fresh('sandbox'))
    await seed(url, `${queue}.dlq`, queue)
    // Batches start at one message and grow: several moves, one warning.
    const run = await bq(['dlq', 'redrive', queue, '--to', sandbox, '--yes', '-b', url])
    assert.equal(run.code, 0, JSON.stringify(run.out))
    const report = ok(run.out) as {counts: {redriven: number}; possible_duplicates?: number}
    assert.equal(report.counts.redriven, 4)
    // Nothing failed between copy and removal, so nothing may be on both.
    assert.equal(report.possible_duplicates ?? 0, 0)
    assert.equal(run.out.warnings.length, 1, JSON.stringify(run.out.warnings))
    assert.match(run.out.warnings[0], /different hash slots.*not atomic.*possible_duplicates/)
    assert.deepEqual(await ids(sandbox), EXAMPLE_IDS)
    assert.equal(await cluster!.llen(`${queue}.dlq`), 0)
  })

  test('untagged names work for single-key commands; a redrive between them warns once', async (t) => {
    if (!(await ready(t))) return
    const queue = fresh('plain')
    const url = urlAvoiding(nodes!, `${queue}.dlq`)
    await seed(url, `${queue}.dlq`, queue)
    assert.equal(ok((await bq(['peek', `${queue}.dlq`, '-b', url])).out).depth, 4)
    const run = await bq(['dlq', 'redrive', queue, '--yes', '-b', url])
    assert.equal(run.code, 0, JSON.stringify(run.out))
    assert.equal(run.out.warnings.length, 1)
    assert.match(run.out.warnings[0], /not atomic/)
    assert.deepEqual(await ids(queue), EXAMPLE_IDS)
  })

  test('dlq recover returns reservations from the slot-local staging list of an untagged queue', async (t) => {
    if (!(await ready(t))) return
    const queue = fresh('recover')
    const dlq = `${queue}.dlq`
    const url = urlAvoiding(nodes!, dlq)
    // What a run that died mid-drain leaves: reserved messages in {K}:processing (K's own slot).
    await cluster!.rpush(`{${dlq}}:processing`, 'reserved-1', 'reserved-2')
    await cluster!.rpush(dlq, 'waiting')
    const run = await bq(['dlq', 'recover', queue, '-b', url])
    assert.equal(run.code, 0, JSON.stringify(run.out))
    assert.deepEqual(await cluster!.lrange(dlq, 0, -1), ['reserved-1', 'reserved-2', 'waiting'])
  })

  test('purge and replay reach the owning master', async (t) => {
    if (!(await ready(t))) return
    const queue = `{${fresh('purge')}}`
    const url = urlAvoiding(nodes!, queue)
    await seed(url, `${queue}.dlq`, queue)
    const purge = await bq(['dlq', 'purge', queue, '--no-backup', '--yes', '-b', url])
    assert.equal(purge.code, 0, JSON.stringify(purge.out))
    assert.equal(await cluster!.llen(`${queue}.dlq`), 0)
    // A DLQ exported with peek and replayed into another slot's queue: copies only, the source stays.
    await seed(url, `${queue}.dlq`, queue)
    const other = `{${fresh('replayed')}}`
    const exported = await runBq(['peek', `${queue}.dlq`, '--jsonl', '--all', '-b', url])
    assert.equal(exported.code, 0, exported.stderr)
    const replay = await runBq(['replay', '-', '--to', other, '--yes', '-b', url, '--json'], {stdin: exported.stdout})
    assert.equal(replay.code, 0, replay.stdout + replay.stderr)
    assert.equal(await cluster!.llen(other), 4)
    assert.equal(await cluster!.llen(`${queue}.dlq`), 4)
  })

  test('dlq ls and queue completion see the queues of every master, also through a replica', async (t) => {
    if (!(await ready(t))) return
    const stemName = fresh('ls')
    const masters = nodes!.filter((node) => node.role === 'master')
    const queues = masters.map((node) => taggedOn(nodes!, node.port, stemName))
    const url = `redis://127.0.0.1:${masters[0].port}`
    for (const queue of queues) await seed(url, `${queue}.dlq`, queue)
    const ls = ok((await bq(['dlq', 'ls', '-b', url])).out)
    const listed = JSON.stringify(ls)
    for (const queue of queues) assert.ok(listed.includes(JSON.stringify(`${queue}.dlq`)), `${queue}.dlq missing from ${listed}`)
    const completion = await runBq(['__complete-queues', '-b', url])
    for (const queue of queues) assert.ok(completion.stdout.split('\n').includes(`${queue}.dlq`), completion.stdout)
    // A replica's URL works as well: the writes and reads still go to the masters.
    const replica = nodes!.find((node) => node.role === 'replica')!
    const viaReplica = JSON.stringify(ok((await bq(['dlq', 'ls', '-b', `redis://127.0.0.1:${replica.port}`])).out))
    for (const queue of queues) assert.ok(viaReplica.includes(JSON.stringify(`${queue}.dlq`)), viaReplica)
  })

  test('a cluster URL naming a database other than 0 is a usage error', async (t) => {
    if (!(await ready(t))) return
    const run = await bq(['peek', 'x', '-b', `redis://127.0.0.1:${FIRST}/3`])
    assert.equal(run.code, 2)
    assert.ok(!run.out.ok && /only database 0/.test(run.out.error.message), JSON.stringify(run.out))
  })
})
