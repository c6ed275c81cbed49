// bench/artemis: bq dlq redrive against a raw-rhea baseline, same broker, same run.
// Usage: node bench/artemis/bench.js [N=100000]   (npm run build first; Artemis from test/brokers)
import {spawnSync} from 'node:child_process'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import {ArtemisConnection} from '../../dist/lib/brokers/artemis/connection.js'
import {ArtemisManagement} from '../../dist/lib/brokers/artemis/management.js'
import {parseArtemisUrl} from '../../dist/lib/brokers/artemis/url.js'
import {redactUrl} from '../../dist/lib/brokers/shared/redact.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..', '..')
const n = Number(process.argv[2] ?? 100_000)
const url = process.env.BQ_TEST_ARTEMIS_URL ?? 'artemis://bq:bq@127.0.0.1:5673'

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

/** Counts of the two queues, then drops them so the test broker does not keep 2×N messages. */
async function checkAndDrop(queue) {
  const connection = await ArtemisConnection.open(parseArtemisUrl(new URL(url), redactUrl(url)), redactUrl(url), 'bench')
  try {
    const management = await ArtemisManagement.open(connection)
    const count = async (name) => (await management.attribute(`queue.${name}`, 'messageCount')).value
    const counts = {dlq: await count(`${queue}.dlq`), target: await count(queue)}
    for (const name of [queue, `${queue}.dlq`]) await management.invoke('broker', 'destroyQueue', [name, true, true])
    return counts
  } finally {
    await connection.close()
  }
}

const stamp = Date.now().toString(36)
const rows = []
const runs = [
  ['raw rhea baseline (credit 1000, send, accept once the copy is accepted)', (queue) => ['node', path.join(here, 'baseline.js'), url, queue, String(n)]],
  ['bq dlq redrive', (queue) => ['node', path.join(root, 'bin', 'run.js'), 'dlq', 'redrive', queue, '--yes', '-b', url]],
]
for (const [name, command] of runs) {
  const queue = `bench-artemis-${rows.length}-${stamp}`
  seed(queue)
  const result = timed(command(queue))
  const counts = await checkAndDrop(queue)
  if (counts.dlq !== 0 || counts.target !== n) throw new Error(`${name}: left ${counts.dlq} on the DLQ and ${counts.target} on the target, expected 0 and ${n}`)
  rows.push([name, result])
}

const lines = [`### bench/artemis — ${new Date().toISOString().slice(0, 10)}, ${n.toLocaleString('en')} messages, ${redactUrl(url)}`, '', '| run | time | messages/s | peak RSS |', '| --- | ---: | ---: | ---: |']
for (const [name, r] of rows) lines.push(`| ${name} | ${r.seconds.toFixed(2)} s | ${Math.round(n / r.seconds).toLocaleString('en')} | ${r.rssMiB.toFixed(0)} MiB |`)
lines.push('', `bq / baseline rate: **${(rows[0][1].seconds / rows[1][1].seconds).toFixed(2)}×**.`)
console.log(lines.join('\n'))
