// bench/kafka/publish: a JSONL file of N envelopes to Kafka three ways in one run:
// bq replay --as-is (bq's publish-from-file path), kcat -P, and a minimal kafkajs script.
// Usage: node bench/kafka/publish.js [N=100000] [--before <package dir of another build>]   (broker: $BQ_TEST_KAFKA_URL, default kafka://127.0.0.1:19092)
// Needs kcat (Debian package kafkacat) and a build (npm run build).
import path from 'node:path'

import {bootstrap, createTopics, deleteTopics, envelopeFile, here, recordCount, root, table, timed, url} from './common.js'

const n = Number(process.argv.slice(2).find((arg) => /^\d+$/.test(arg)) ?? 100_000)
const beforeAt = process.argv.indexOf('--before')
const beforeDir = beforeAt > 0 ? path.resolve(process.argv[beforeAt + 1]) : undefined
const file = await envelopeFile(n)
const stamp = Date.now().toString(36)
const topics = {bq: `bench-pub-bq-${stamp}`, kcat: `bench-pub-kcat-${stamp}`, kafkajs: `bench-pub-kafkajs-${stamp}`, headers: `bench-pub-headers-${stamp}`, ...(beforeDir ? {before: `bench-pub-before-${stamp}`} : {})}
await createTopics(Object.values(topics))
try {
  const rows = []
  rows.push(['kafkajs baseline', timed(['node', path.join(here, 'baseline-publish.js'), file, topics.kafkajs])])
  rows.push(['kcat -P (acks=all, idempotent)', timed(['kcat', '-P', '-b', bootstrap, '-t', topics.kcat, '-X', 'acks=all', '-X', 'enable.idempotence=true', '-l', file])])
  rows.push(['bq replay --as-is', timed(['node', path.join(root, 'bin', 'run.js'), 'replay', file, '--as-is', '--to', topics.bq, '--yes', '-b', url])])
  // Not a target, an explanation: the same kafkajs script paying for the six bq- headers.
  rows.push(['kafkajs + bq- headers (JSON.parse)', timed(['node', path.join(here, 'baseline-publish.js'), file, topics.headers, '--headers'])])
  if (beforeDir) rows.push([`bq before (${beforeDir})`, timed(['node', path.join(beforeDir, 'bin', 'run.js'), 'replay', file, '--as-is', '--to', topics.before, '--yes', '-b', url])])
  for (const [name, topic] of Object.entries(topics)) {
    const count = await recordCount(topic)
    if (count !== n) throw new Error(`${name}: ${topic} holds ${count} records, expected ${n}`)
  }
  const lines = table(`### bench/kafka/publish — ${new Date().toISOString().slice(0, 10)}, ${n.toLocaleString('en')} envelopes from ${path.basename(file)}`, n, rows)
  const ratio = rows[0][1].seconds / rows[2][1].seconds
  lines.push('', `bq / kafkajs baseline rate: **${ratio.toFixed(2)}×** (target ≥ 0.7×); bq / kcat: ${(rows[1][1].seconds / rows[2][1].seconds).toFixed(2)}×; bq / kafkajs with the same headers: ${(rows[3][1].seconds / rows[2][1].seconds).toFixed(2)}×.`)
  if (beforeDir) lines.push(`bq before / kafkajs baseline rate: ${(rows[0][1].seconds / rows[4][1].seconds).toFixed(2)}×.`)
  console.log(lines.join('\n'))
} finally {
  await deleteTopics(Object.values(topics))
}
