// Shared helpers for the Kafka benchmarks: the broker URL, a plain kafkajs client, timing with
// peak RSS (/usr/bin/time), and the input file.
import {spawnSync} from 'node:child_process'
import {createReadStream, createWriteStream, existsSync, mkdirSync} from 'node:fs'
import path from 'node:path'
import readline from 'node:readline'
import {fileURLToPath} from 'node:url'

import kafkajs from 'kafkajs'

const {Kafka, logLevel} = kafkajs
export const here = path.dirname(fileURLToPath(import.meta.url))
export const root = path.resolve(here, '..', '..')
export const tmp = path.join(root, 'bench', 'tmp')
export const url = process.env.BQ_TEST_KAFKA_URL ?? 'kafka://127.0.0.1:19092'
/** host:port list of the URL (no credentials or options: the benchmarks run against a plain test broker). */
export const bootstrap = url.replace(/^kafka:\/\//, '').replace(/\?.*$/, '').replace(/^.*@/, '').replace(/\/$/, '')

export function client() {
  return new Kafka({brokers: bootstrap.split(','), clientId: 'bq-bench', logLevel: logLevel.NOTHING})
}

/** Runs a command under /usr/bin/time: wall seconds and peak RSS of the process. */
export function timed(args, options = {}) {
  const result = spawnSync('/usr/bin/time', ['-f', '%e %M', ...args], {encoding: 'utf8', maxBuffer: 1 << 26, ...options})
  if (result.status !== 0) throw new Error(`${args.join(' ')} failed (${result.status}): ${result.stderr.slice(-2000)}`)
  const [seconds, kb] = result.stderr.trim().split('\n').pop().split(' ').map(Number)
  return {seconds, rssMiB: kb / 1024}
}

/** Creates fresh single-partition topics (so every run writes to an empty one). */
export async function createTopics(topics) {
  const admin = client().admin()
  await admin.connect()
  try {
    await admin.createTopics({topics: topics.map((topic) => ({topic, numPartitions: 1, replicationFactor: 1})), waitForLeaders: true})
  } finally {
    await admin.disconnect()
  }
}

/** Deletes the benchmark's topics and the redrive groups bq made for them. */
export async function deleteTopics(topics) {
  const admin = client().admin()
  await admin.connect()
  try {
    const existing = new Set(await admin.listTopics())
    const doomed = topics.filter((topic) => existing.has(topic))
    if (doomed.length > 0) await admin.deleteTopics({topics: doomed, timeout: 60_000})
    await admin.deleteGroups(topics.map((topic) => `bq-redrive.${topic}`)).catch(() => undefined)
  } finally {
    await admin.disconnect()
  }
}

/** How many records a topic holds (sum of high watermarks of a topic written from empty). */
export async function recordCount(topic) {
  const admin = client().admin()
  await admin.connect()
  try {
    return (await admin.fetchTopicOffsets(topic)).reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0)
  } finally {
    await admin.disconnect()
  }
}

/**
 * A JSONL file of `n` envelopes: the first n lines of bench/tmp/orders-100000.jsonl or
 * orders-1000000.jsonl when one is there (bench/validate writes them), else generated.
 */
export async function envelopeFile(n) {
  mkdirSync(tmp, {recursive: true})
  const file = path.join(tmp, `kafka-orders-${n}.jsonl`)
  if (existsSync(file)) return file
  const source = [100_000, 1_000_000].map((size) => path.join(tmp, `orders-${size}.jsonl`)).find((candidate, i) => existsSync(candidate) && [100_000, 1_000_000][i] >= n)
  const out = createWriteStream(file)
  let written = 0
  if (source !== undefined) {
    for await (const line of readline.createInterface({input: createReadStream(source), crlfDelay: Infinity})) {
      if (written >= n) break
      out.write(line + '\n')
      written++
    }
  }
  for (; written < n; written++) {
    const id = `00000000-0000-4000-8000-${String(written).padStart(12, '0')}`
    out.write(`{"job":"urn:babel:orders:created","trace_id":"${id}","data":{"order_id":${written + 1},"amount":99.90,"currency":"EUR"},"meta":{"id":"${id}","queue":"orders","lang":"php","schema_version":1,"created_at":${1749132727000 + written}},"attempts":0}\n`)
  }
  await new Promise((resolve, reject) => out.end((error) => (error ? reject(error) : resolve())))
  return file
}

export function table(title, n, rows) {
  const lines = [title, '', '| run | time | messages/s | peak RSS |', '| --- | ---: | ---: | ---: |']
  for (const [name, r] of rows) lines.push(`| ${name} | ${r.seconds.toFixed(2)} s | ${Math.round(n / r.seconds).toLocaleString('en')} | ${r.rssMiB.toFixed(0)} MiB |`)
  return lines
}
