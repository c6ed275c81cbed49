// bq trace over N envelopes in Q Redis lists against the raw pipelined-LRANGE scan (baseline.js),
// in the same run, each as its own process under /usr/bin/time (wall time, peak RSS).
// Usage: node bench/trace/bench.js [N=200000] [Q=100] [RUNS=3] [REDIS_URL=redis://127.0.0.1:6379/0]
import {execFileSync, spawnSync} from 'node:child_process'
import {loadavg} from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import Redis from 'ioredis'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..', '..')
const [n = '200000', q = '100', runs = '3', url = 'redis://127.0.0.1:6379/0'] = process.argv.slice(2)
const prefix = `bqbench-trace-${Date.now().toString(36)}:`
const total = Number(n)

const seedStart = Date.now()
const traceId = execFileSync(process.execPath, [path.join(here, 'seed.js'), url, prefix, n, q], {encoding: 'utf8'}).trim()
const seedSeconds = (Date.now() - seedStart) / 1000

/** Runs a node script under /usr/bin/time: wall seconds, peak RSS in MiB, exit code and output. */
function timed(args) {
  const run = spawnSync('/usr/bin/time', ['-f', '%e %M', process.execPath, ...args], {encoding: 'utf8', cwd: root, env: {...process.env, NO_COLOR: '1', BQ_CONTEXT: ''}, maxBuffer: 64 * 1024 * 1024})
  const [wall, rssKb] = run.stderr.trim().split('\n').at(-1).split(' ').map(Number)
  return {wall, rss: rssKb / 1024, code: run.status, stdout: run.stdout, stderr: run.stderr}
}

const brokerUrl = `${url}${url.includes('?') ? '&' : '?'}prefix=${prefix}`
const rows = []
for (let i = 0; i < Number(runs); i++) {
  const raw = timed([path.join(here, 'baseline.js'), url, prefix, traceId])
  const bq = timed([path.join(root, 'bin', 'run.js'), 'trace', traceId, '-b', brokerUrl, '--json', '--max-scan', String(total), '--timeout', '600'])
  const found = bq.code === 0 ? JSON.parse(bq.stdout).result.sightings.length : `exit ${bq.code}: ${bq.stderr.trim().split('\n').at(-2)}`
  rows.push({raw, bq, found, rawFound: raw.stdout.trim()})
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const rawWall = median(rows.map((r) => r.raw.wall))
const bqWall = median(rows.map((r) => r.bq.wall))
const fmt = (x) => Math.round(x).toLocaleString('en-US')
console.log(`### bench/trace/bench.js — ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${fmt(total)} envelopes in ${q} Redis lists (median of ${runs}; seeding took ${seedSeconds.toFixed(0)} s)\n`)
console.log('| scan | time | envelopes/s | peak RSS | found |')
console.log('| --- | ---: | ---: | ---: | --- |')
console.log(`| raw: SCAN + pipelined LRANGE + byte search (baseline.js) | ${rawWall.toFixed(2)} s | ${fmt(total / rawWall)} | ${Math.max(...rows.map((r) => r.raw.rss)).toFixed(0)} MiB | ${rows[0].rawFound} |`)
console.log(`| bq trace --json | ${bqWall.toFixed(2)} s | ${fmt(total / bqWall)} | ${Math.max(...rows.map((r) => r.bq.rss)).toFixed(0)} MiB | ${rows.map((r) => r.found).join(', ')} copies |`)
console.log(`\nbq / raw: **${(rawWall / bqWall).toFixed(2)}×** the raw scan's rate; load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`)

const redis = new Redis(url)
let cursor = '0'
do {
  const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000)
  if (keys.length > 0) await redis.del(...keys)
  cursor = next
} while (cursor !== '0')
await redis.quit()
