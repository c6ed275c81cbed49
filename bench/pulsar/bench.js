/* global fetch */
// bench/pulsar: bq dlq redrive against a raw WebSocket baseline on the same Pulsar, same run.
// Usage: node bench/pulsar/bench.js [N=100000]   (run `npm run build` first)
// The URL is BQ_TEST_PULSAR_URL, default the standalone of `test/brokers/brokers.sh start pulsar`.
// The bench topics are deleted afterwards so the standalone's storage stays small.
import {spawnSync} from 'node:child_process'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..', '..')
const n = Number(process.argv[2] ?? 100_000)
const url = process.env.BQ_TEST_PULSAR_URL ?? 'pulsar://127.0.0.1:6650?admin=http://127.0.0.1:8080'
const admin = new URL(url).searchParams.get('admin') ?? 'http://127.0.0.1:8080'

function timed(args) {
  const result = spawnSync('/usr/bin/time', ['-f', '%e %M', ...args], {encoding: 'utf8', maxBuffer: 1 << 26})
  if (result.status !== 0) throw new Error(`${args.join(' ')} failed: ${result.stderr}`)
  const [seconds, kb] = result.stderr.trim().split('\n').pop().split(' ').map(Number)
  return {seconds, rssMiB: kb / 1024}
}
function seed(queue, dlq) {
  const started = Date.now()
  const result = spawnSync('node', [path.join(here, 'seed.js'), url, queue, dlq, String(n)], {stdio: 'inherit'})
  if (result.status !== 0) throw new Error('seeding failed')
  return (Date.now() - started) / 1000
}
async function stats(topic) {
  return (await fetch(`${admin}/admin/v2/persistent/public/default/${topic}/stats?getPreciseBacklog=true`)).json()
}
const depth = async (topic, subscription) => (await stats(topic)).subscriptions?.[subscription]?.msgBacklog
const stored = async (topic) => (await stats(topic)).msgInCounter

const stamp = Date.now().toString(36)
const rows = []
const topics = []
const baseQueue = `bench-base-${stamp}`
topics.push(baseQueue, `${baseQueue}.dlq`)
const seedSeconds = seed(baseQueue, `${baseQueue}.dlq`)
rows.push(['raw WebSocket baseline (consumer → producer, ack after the copy is stored)', timed(['node', path.join(here, 'baseline.js'), admin, baseQueue, `${baseQueue}.dlq`])])
const queue = `bench-bq-${stamp}`
topics.push(queue, `${queue}.dlq`)
seed(queue, `${queue}.dlq`)
rows.push(['bq dlq redrive', timed(['node', path.join(root, 'bin', 'run.js'), 'dlq', 'redrive', queue, '--yes', '-b', url])])
const left = [await depth(`${baseQueue}.dlq`, 'bq-baseline'), await depth(`${queue}.dlq`, 'bq-redrive')]
const arrived = [await stored(baseQueue), await stored(queue)]
for (const topic of topics) await fetch(`${admin}/admin/v2/persistent/public/default/${topic}?force=true`, {method: 'DELETE'})

const lines = [`### bench/pulsar — ${new Date().toISOString().slice(0, 10)}, ${n.toLocaleString('en')} messages, ${url}`, '', '| run | time | messages/s | peak RSS |', '| --- | ---: | ---: | ---: |']
for (const [name, r] of rows) lines.push(`| ${name} | ${r.seconds.toFixed(2)} s | ${Math.round(n / r.seconds).toLocaleString('en')} | ${r.rssMiB.toFixed(0)} MiB |`)
lines.push('', `Seeding ${n.toLocaleString('en')} messages through bq's publish: ${seedSeconds.toFixed(1)} s (${Math.round(n / seedSeconds).toLocaleString('en')}/s).`)
lines.push(`Left on the DLQs (baseline, bq): ${left.join(', ')}; stored on the targets: ${arrived.join(', ')}.`)
lines.push('', `bq / baseline rate: **${(rows[0][1].seconds / rows[1][1].seconds).toFixed(2)}×**.`)
console.log(lines.join('\n'))
