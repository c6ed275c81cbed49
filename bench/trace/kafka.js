// bq trace over one Kafka topic of N records against kcat's raw consume of the same topic
// (`kcat -C -e -o beginning`, piped to a byte search for the id), in the same run, each under
// /usr/bin/time (wall time, peak RSS). Seeds with kcat -P from a file of envelopes, three of them
// carrying the traced trace_id (first, middle, last). Deletes the topic at the end.
// Usage: node bench/trace/kafka.js [N=1000000] [PARTITIONS=3] [RUNS=3] [BROKER=127.0.0.1:19092]
import {execFileSync, spawnSync} from 'node:child_process'
import {randomUUID} from 'node:crypto'
import {createWriteStream, rmSync} from 'node:fs'
import {loadavg, tmpdir} from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import kafkajs from 'kafkajs'

import {make} from '../../dist/lib/envelope/index.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..', '..')
const [n = '1000000', partitions = '3', runs = '3', broker = '127.0.0.1:19092'] = process.argv.slice(2)
const total = Number(n)
const topic = `bqbench-trace-${Date.now().toString(36)}`
const traceId = randomUUID()

const admin = new kafkajs.Kafka({brokers: [broker], clientId: 'bq-bench', logLevel: kafkajs.logLevel.NOTHING}).admin()
await admin.connect()
await admin.createTopics({topics: [{topic, numPartitions: Number(partitions)}], waitForLeaders: true})

const seedStart = Date.now()
const file = path.join(tmpdir(), `${topic}.jsonl`)
const out = createWriteStream(file)
const marked = new Set([0, Math.floor(total / 2), total - 1])
for (let i = 0; i < total; i++) {
  const envelope = make('urn:babel:orders:created', `{"order_id":${i + 1},"amount":99.90,"currency":"EUR","sku":"SKU-${i % 977}"}`, {queue: topic, ...(marked.has(i) ? {traceId} : {})})
  if (!out.write(`${envelope.text}\n`)) await new Promise((resolve) => out.once('drain', resolve))
}
await new Promise((resolve) => out.end(resolve))
execFileSync('kcat', ['-P', '-b', broker, '-t', topic, '-l', file, '-X', 'linger.ms=50', '-X', 'batch.num.messages=10000'], {stdio: 'inherit'})
rmSync(file)
const seedSeconds = (Date.now() - seedStart) / 1000

/** Runs a command under /usr/bin/time: wall seconds, peak RSS in MiB, exit code and output. */
function timed(command, args) {
  const run = spawnSync('/usr/bin/time', ['-f', '%e %M', command, ...args], {encoding: 'utf8', cwd: root, env: {...process.env, NO_COLOR: '1', BQ_CONTEXT: ''}, maxBuffer: 64 * 1024 * 1024})
  const [wall, rssKb] = run.stderr.trim().split('\n').at(-1).split(' ').map(Number)
  return {wall, rss: rssKb / 1024, code: run.status, stdout: run.stdout, stderr: run.stderr}
}

const rows = []
for (let i = 0; i < Number(runs); i++) {
  // kcat's consume, and grep's byte search, in one shell pipeline (time and RSS: the larger process's).
  const raw = timed('sh', ['-c', `kcat -C -b ${broker} -t ${topic} -o beginning -e -q | grep -c ${traceId}`])
  const bq = timed(process.execPath, [path.join(root, 'bin', 'run.js'), 'trace', traceId, '-b', `kafka://${broker}`, '--queue', topic, '--json', '--max-scan', String(total), '--timeout', '900'])
  const found = bq.code === 0 ? JSON.parse(bq.stdout).result.sightings.length : `exit ${bq.code}: ${bq.stderr.trim().split('\n').at(-2)}`
  rows.push({raw, bq, found, rawFound: raw.stdout.trim()})
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const rawWall = median(rows.map((r) => r.raw.wall))
const bqWall = median(rows.map((r) => r.bq.wall))
const fmt = (x) => Math.round(x).toLocaleString('en-US')
console.log(`### bench/trace/kafka.js — ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${fmt(total)} records in one topic of ${partitions} partitions (median of ${runs}; seeding took ${seedSeconds.toFixed(0)} s)\n`)
console.log('| scan | time | records/s | peak RSS | found |')
console.log('| --- | ---: | ---: | ---: | --- |')
console.log(`| raw: kcat -C -e -o beginning \\| grep -c | ${rawWall.toFixed(2)} s | ${fmt(total / rawWall)} | ${Math.max(...rows.map((r) => r.raw.rss)).toFixed(0)} MiB | ${rows.map((r) => r.rawFound).join(', ')} |`)
console.log(`| bq trace --json | ${bqWall.toFixed(2)} s | ${fmt(total / bqWall)} | ${Math.max(...rows.map((r) => r.bq.rss)).toFixed(0)} MiB | ${rows.map((r) => r.found).join(', ')} copies |`)
console.log(`\nbq / raw: **${(rawWall / bqWall).toFixed(2)}×** the raw scan's rate; load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)

await admin.deleteTopics({topics: [topic], timeout: 30_000}).catch(() => undefined)
await admin.disconnect()
