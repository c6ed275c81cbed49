// bench/rabbitmq: a filtered `bq dlq redrive` that leaves most messages behind, against an
// unfiltered redrive of the same N on the same broker, in the same run.
// Usage: node bench/rabbitmq/filtered-redrive.js [N=10000] [EVERY=10] [quorum]   (run `npm run build` first)
// BQ_BENCH_DIST=/path/to/another/build/bin/run.js times another build's bq (e.g. one from before a change).
//
// Both runs examine all N messages. The filtered one moves 1 in EVERY (--select reason=selected)
// and hands the rest back to the DLQ, holding them un-acked until it ends; the unfiltered one
// moves all N. Before the drain took one channel per consumer window, every ack scanned past all
// the messages the run held on its one channel, so the filtered run grew with N² (see RESULTS.md).
// The queues are deleted afterwards. Wall time and peak RSS of the bq process only (/usr/bin/time).
import {spawnSync} from 'node:child_process'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import amqp from 'amqplib'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..', '..')
const n = Number(process.argv[2] ?? 10_000)
const every = Number(process.argv[3] ?? 10)
const type = process.argv[4] === 'quorum' ? 'quorum' : 'classic'
const url = process.env.BQ_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672'
const bq = process.env.BQ_BENCH_DIST ?? path.join(root, 'bin', 'run.js')

function timed(args) {
  const result = spawnSync('/usr/bin/time', ['-f', '%e %M', ...args], {encoding: 'utf8', maxBuffer: 1 << 26})
  if (result.status !== 0) throw new Error(`${args.join(' ')} failed (${result.status}): ${result.stderr}`)
  const [seconds, kb] = result.stderr.trim().split('\n').pop().split(' ').map(Number)
  return {seconds, rssMiB: kb / 1024}
}

function seed(queue) {
  const result = spawnSync('node', [path.join(here, 'seed.js'), url, queue, String(n), String(every), type], {stdio: 'inherit'})
  if (result.status !== 0) throw new Error('seeding failed')
}

async function depths(queues) {
  const connection = await amqp.connect(url)
  const out = []
  for (const queue of queues) {
    const channel = await connection.createChannel()
    out.push((await channel.checkQueue(queue)).messageCount)
    await channel.close()
  }
  await connection.close()
  return out
}

async function drop(queues) {
  const connection = await amqp.connect(url)
  for (const queue of queues) {
    const channel = await connection.createChannel()
    channel.on('error', () => undefined)
    await channel.deleteQueue(queue).catch(() => undefined)
    await channel.close().catch(() => undefined)
  }
  await connection.close()
}

const stamp = Date.now().toString(36)
const consent = type === 'quorum' ? ['--accept-delivery-cost'] : []
const runs = [
  {name: 'unfiltered redrive (baseline): moves all', queue: `bench-all-${stamp}`, args: []},
  {name: `filtered redrive: moves 1 in ${every}, leaves the rest`, queue: `bench-filtered-${stamp}`, args: ['--select', 'reason=selected']},
]
const rows = []
for (const run of runs) {
  seed(run.queue)
  const result = timed(['node', bq, 'dlq', 'redrive', run.queue, '--yes', '-b', url, ...consent, ...run.args])
  const [target, dlq] = await depths([run.queue, `${run.queue}.dlq`])
  const moved = run.args.length === 0 ? n : Math.ceil(n / every)
  if (target !== moved || dlq !== n - moved) throw new Error(`${run.name}: target ${target}, DLQ ${dlq}; expected ${moved} and ${n - moved}`)
  await drop([run.queue, `${run.queue}.dlq`])
  rows.push({...run, ...result, moved})
}

const lines = [
  `### bench/rabbitmq/filtered-redrive — ${new Date().toISOString().slice(0, 10)}, ${n.toLocaleString('en')} messages, ${type} DLQ${process.env.BQ_BENCH_DIST ? `, bq from ${process.env.BQ_BENCH_DIST}` : ''}`,
  '',
  '| run | moved | left | time | examined/s | peak RSS |',
  '| --- | ---: | ---: | ---: | ---: | ---: |',
]
for (const r of rows) lines.push(`| ${r.name} | ${r.moved.toLocaleString('en')} | ${(n - r.moved).toLocaleString('en')} | ${r.seconds.toFixed(2)} s | ${Math.round(n / r.seconds).toLocaleString('en')} | ${r.rssMiB.toFixed(0)} MiB |`)
lines.push('', `filtered / unfiltered time: **${(rows[1].seconds / rows[0].seconds).toFixed(2)}×**`)
console.log(lines.join('\n'))
