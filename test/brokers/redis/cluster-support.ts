/**
 * The local Redis Cluster the cluster tests run against (cluster.sh: 3 masters, 3 replicas),
 * started once per test run and reused (the script returns at once when it is healthy), and
 * which of its nodes serve which keys, so every test can point bq at a node that does NOT own
 * the queue's slot (the case that used to fail with MOVED).
 */
import {execFile} from 'node:child_process'
import {readFileSync} from 'node:fs'
import type {TestContext} from 'node:test'
import path from 'node:path'
import {promisify} from 'node:util'
import {Cluster, Redis} from 'ioredis'

import {keySlot} from '../../../src/lib/brokers/redis/cluster.js'
import {underCI} from '../../support/brokers.js'
import {repoRoot} from '../../support/conformance.js'

const run = promisify(execFile)
const script = path.join(repoRoot, 'test', 'brokers', 'redis', 'cluster.sh')

/** Starts (or finds) the cluster on first..first+5; false (after t.skip) when redis-server is missing outside CI. */
/** Stops a cluster a test file started for itself (its six servers would otherwise run, and tick, until the machine stops). */
export async function stopCluster(first: number): Promise<void> {
  await run('bash', [script, 'stop', String(first)], {timeout: 60_000})
}

export async function ensureCluster(t: TestContext, first: number): Promise<boolean> {
  try {
    await run('bash', [script, 'start', String(first)], {timeout: 60_000})
    return true
  } catch (error) {
    const text = `${(error as {stderr?: string}).stderr ?? ''}${String(error)}`
    if (!underCI && /not installed/.test(text)) {
      t.skip('redis-server is not installed')
      return false
    }
    throw error
  }
}

export interface Node {
  id: string
  /** A replica's master's id. */
  master?: string
  host: string
  port: number
  role: 'master' | 'replica'
  slots: Array<[number, number]>
}

/** The cluster's nodes as node `port` sees them now. */
export async function clusterNodes(port: number): Promise<Node[]> {
  const client = new Redis({host: '127.0.0.1', port, lazyConnect: true, retryStrategy: () => null, maxRetriesPerRequest: 0})
  try {
    await client.connect()
    const text = (await client.call('CLUSTER', 'NODES')) as string
    return text
      .trim()
      .split('\n')
      .filter((line) => !/\bfail\b|noaddr/.test(line.split(' ')[2]))
      .map((line) => {
        const fields = line.split(' ')
        const [host, rest] = fields[1].split('@')[0].split(':')
        const slots = fields.slice(8).filter((s) => /^\d/.test(s)).map((s) => s.split('-').map(Number) as [number, number])
        return {id: fields[0], ...(fields[3] === '-' ? {} : {master: fields[3]}), host: host || '127.0.0.1', port: Number(rest), role: fields[2].includes('master') ? 'master' : 'replica', slots: slots.map(([a, b]) => [a, b ?? a] as [number, number])}
      })
  } finally {
    client.disconnect()
  }
}

/** The master among `nodes` that serves `key`. */
export function ownerIn(nodes: Node[], key: string): Node {
  const slot = keySlot(key)
  const owner = nodes.find((node) => node.role === 'master' && node.slots.some(([a, b]) => slot >= a && slot <= b))
  if (owner === undefined) throw new Error(`no master serves slot ${slot} (${key})`)
  return owner
}

/** A URL of a live master that owns none of `keys`. */
export function urlAvoiding(nodes: Node[], ...keys: string[]): string {
  const owners = new Set(keys.map((key) => ownerIn(nodes, key).port))
  const other = nodes.find((node) => node.role === 'master' && !owners.has(node.port))
  if (other === undefined) throw new Error(`every master owns one of ${keys.join(', ')}`)
  return `redis://127.0.0.1:${other.port}`
}

/** `{stem-N}` for the first N whose slot the master on `port` serves. */
export function taggedOn(nodes: Node[], port: number, stem: string): string {
  for (let i = 0; ; i++) {
    const name = `{${stem}-${i}}`
    if (ownerIn(nodes, name).port === port) return name
  }
}

/** Kills a node of the cluster on first..first+5 with SIGKILL (its pidfile, cluster.sh). */
export function killNode(first: number, port: number): void {
  process.kill(Number(readFileSync(`/tmp/bq-redis-cluster/${first}/${port}/redis.pid`, 'utf8')), 'SIGKILL')
}

/** A cluster client for the tests' own reads and writes (census, seeding). */
export async function testCluster(port: number): Promise<Cluster> {
  const cluster = new Cluster([{host: '127.0.0.1', port}], {lazyConnect: true})
  await cluster.connect()
  return cluster
}
