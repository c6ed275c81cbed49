// bench/redrive: bq dlq redrive against a raw-client baseline, same broker, same run.
// Usage: node bench/redrive/bench.js redis|amqp|sqlite [N=100000] [--before <package dir of another build>]
import {spawnSync} from 'node:child_process'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {mkdirSync, rmSync} from 'node:fs'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..', '..')
const kind = process.argv[2] ?? 'redis'
const n = Number(process.argv.slice(3).find((a) => /^\d+$/.test(a)) ?? 100_000)
const beforeAt = process.argv.indexOf('--before')
const tmp = path.join(root, 'bench', 'tmp')
mkdirSync(tmp, {recursive: true})
const urls = {
  redis: process.env.BQ_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0',
  amqp: process.env.BQ_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672',
  sqlite: `sqlite://${path.join(tmp, 'redrive-bench.db')}`,
}
const url = urls[kind]
const baselines = {redis: 'baseline-redis.js', amqp: 'baseline-amqp.js'}

function timed(args) {
  const result = spawnSync('/usr/bin/time', ['-f', '%e %M', ...args], {encoding: 'utf8', maxBuffer: 1 << 26})
  if (result.status !== 0) throw new Error(`${args.join(' ')} failed: ${result.stderr}`)
  const [seconds, kb] = result.stderr.trim().split('\n').pop().split(' ').map(Number)
  return {seconds, rssMiB: kb / 1024}
}
function seed(queue) {
  const result = spawnSync('node', [path.join(here, 'seed.js'), url, queue, String(n)], {stdio: 'inherit'})
  if (result.status !== 0) throw new Error('seeding failed')
}

if (kind === 'sqlite') rmSync(path.join(tmp, 'redrive-bench.db'), {force: true})
const stamp = Date.now().toString(36)
const rows = []
if (baselines[kind]) {
  const queue = `bench-base-${stamp}`
  seed(queue)
  const base = timed(['node', path.join(here, baselines[kind]), url, queue])
  rows.push(['raw client baseline', base])
}
const queue = `bench-bq-${stamp}`
seed(queue)
const bq = timed(['node', path.join(root, 'bin', 'run.js'), 'dlq', 'redrive', queue, '--yes', '-b', url])
rows.push(['bq dlq redrive', bq])
if (beforeAt > 0) {
  const beforeQueue = `bench-before-${stamp}`
  seed(beforeQueue)
  const before = timed(['node', path.resolve(process.argv[beforeAt + 1], 'bin', 'run.js'), 'dlq', 'redrive', beforeQueue, '--yes', '-b', url])
  rows.push([`bq before (${process.argv[beforeAt + 1]})`, before])
}

const lines = [`### bench/redrive ${kind} — ${new Date().toISOString().slice(0, 10)}, ${n.toLocaleString('en')} messages`, '', '| run | time | messages/s | peak RSS |', '| --- | ---: | ---: | ---: |']
for (const [name, r] of rows) lines.push(`| ${name} | ${r.seconds.toFixed(2)} s | ${Math.round(n / r.seconds).toLocaleString('en')} | ${r.rssMiB.toFixed(0)} MiB |`)
if (rows.length >= 2) lines.push('', `bq / baseline rate: **${(rows[0][1].seconds / rows[1][1].seconds).toFixed(2)}×** (target ≥ 0.7×)${rows[2] ? `; bq before / baseline: ${(rows[0][1].seconds / rows[2][1].seconds).toFixed(2)}×` : ''}.`)
console.log(lines.join('\n'))
