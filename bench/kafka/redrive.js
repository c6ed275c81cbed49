// bench/kafka/redrive: bq dlq redrive against a raw kafkajs consume+produce baseline, same broker,
// same run, N dead-lettered envelopes each (seeded through bq's adapter by bench/redrive/seed.js).
// Usage: node bench/kafka/redrive.js [N=100000]   (needs npm run build)
import {spawnSync} from 'node:child_process'
import path from 'node:path'

import {createTopics, deleteTopics, here, recordCount, root, table, timed, url} from './common.js'

const n = Number(process.argv[2] ?? 100_000)
const stamp = Date.now().toString(36)
const queues = {baseline: `bench-rd-base-${stamp}`, bq: `bench-rd-bq-${stamp}`}
const topics = Object.values(queues).flatMap((queue) => [queue, `${queue}.dlq`])
await createTopics(topics)
try {
  for (const queue of Object.values(queues)) {
    const seeded = spawnSync('node', [path.join(root, 'bench', 'redrive', 'seed.js'), url, queue, String(n)], {stdio: 'inherit'})
    if (seeded.status !== 0) throw new Error('seeding failed')
  }
  const rows = []
  rows.push(['raw kafkajs consume+produce', timed(['node', path.join(here, 'baseline-redrive.js'), queues.baseline])])
  rows.push(['bq dlq redrive', timed(['node', path.join(root, 'bin', 'run.js'), 'dlq', 'redrive', queues.bq, '--yes', '-b', url])])
  for (const [name, queue] of Object.entries(queues)) {
    const count = await recordCount(queue)
    if (count !== n) throw new Error(`${name}: ${queue} holds ${count} records, expected ${n}`)
  }
  const lines = table(`### bench/kafka/redrive — ${new Date().toISOString().slice(0, 10)}, ${n.toLocaleString('en')} messages`, n, rows)
  lines.push('', `bq / baseline rate: **${(rows[0][1].seconds / rows[1][1].seconds).toFixed(2)}×**.`)
  console.log(lines.join('\n'))
} finally {
  await deleteTopics(topics)
}
