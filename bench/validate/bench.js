// bench/validate: bq validate against a JSON.parse + ajv baseline, measured in the same run.
// Usage: node bench/validate/bench.js [lines=100000] [--big] [--before <package dir>]
// (--big adds the 1,000,000-line memory run; --before also times another build's bin/run.js.)
import {spawnSync} from 'node:child_process'
import {mkdirSync, createWriteStream, existsSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {randomUUID} from 'node:crypto'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..', '..')
const tmp = path.join(root, 'bench', 'tmp')
const registry = path.resolve(root, '..', 'shared', 'registry-examples', 'registry.json')
const schema = path.resolve(root, '..', 'shared', 'registry-examples', 'schemas', 'orders-created.json')
const bin = path.join(root, 'bin', 'run.js')
const lines = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 100_000)
const big = process.argv.includes('--big')
mkdirSync(tmp, {recursive: true})

async function generate(file, count) {
  if (existsSync(file)) return
  const out = createWriteStream(file)
  for (let i = 0; i < count; i++) {
    const line = JSON.stringify({job: 'urn:babel:orders:created', trace_id: randomUUID(), data: {order_id: i + 1, amount: (i % 1000) / 10, currency: 'EUR'}, meta: {id: randomUUID(), queue: 'orders', lang: 'php', schema_version: 1, created_at: 1749132727000 + i}, attempts: 0})
    if (!out.write(line + '\n')) await new Promise((r) => out.once('drain', r))
  }
  await new Promise((r) => out.end(r))
}

/** Runs a command under /usr/bin/time; returns seconds and peak RSS in MiB. */
function measure(args) {
  const result = spawnSync('/usr/bin/time', ['-f', '%e %M', ...args], {encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 1 << 26})
  const last = result.stderr.trim().split('\n').pop()
  const [seconds, kb] = last.split(' ').map(Number)
  return {seconds, rssMiB: kb / 1024, status: result.status}
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
function repeat(args, times) {
  const runs = Array.from({length: times}, () => measure(args))
  return {seconds: median(runs.map((r) => r.seconds)), rssMiB: Math.max(...runs.map((r) => r.rssMiB)), status: runs[0].status}
}

const file = path.join(tmp, `orders-${lines}.jsonl`)
await generate(file, lines)
const beforeAt = process.argv.indexOf('--before')
const beforeBin = beforeAt > 0 ? path.resolve(process.argv[beforeAt + 1], 'bin', 'run.js') : undefined
const base = repeat(['node', path.join(here, 'baseline.js'), file, schema], 5)
const bq = repeat(['node', bin, 'validate', file, '--registry', registry, '--quiet'], 5)
const before = beforeBin && repeat(['node', beforeBin, 'validate', file, '--registry', registry, '--quiet'], 5)
const one = path.resolve(root, '..', 'shared', 'conformance', 'fixtures', 'order-created.json')
const nodeStart = repeat(['node', '-e', '0'], 11)
const bqStart = repeat(['node', bin, 'validate', one], 11)

const report = [
  `### bench/validate — ${new Date().toISOString().slice(0, 10)}, ${lines.toLocaleString('en')} lines`,
  '',
  '| run | time (median of 5) | lines/s | peak RSS |',
  '| --- | ---: | ---: | ---: |',
  `| baseline: JSON.parse + precompiled ajv | ${base.seconds.toFixed(2)} s | ${Math.round(lines / base.seconds).toLocaleString('en')} | ${base.rssMiB.toFixed(0)} MiB |`,
  `| bq validate --registry --quiet | ${bq.seconds.toFixed(2)} s | ${Math.round(lines / bq.seconds).toLocaleString('en')} | ${bq.rssMiB.toFixed(0)} MiB |`,
  ...(before ? [`| bq before (${process.argv[beforeAt + 1]}) | ${before.seconds.toFixed(2)} s | ${Math.round(lines / before.seconds).toLocaleString('en')} | ${before.rssMiB.toFixed(0)} MiB | ${(before.seconds / base.seconds).toFixed(2)}× |`] : []),
  '',
  `load average at the end: ${(await import('node:os')).loadavg().map((l) => l.toFixed(2)).join(' ')}`,
  '',
  `bq / baseline time: **${(bq.seconds / base.seconds).toFixed(2)}×** (target ≤ 1.5×).`,
  '',
  '| cold start (median of 11) | time |',
  '| --- | ---: |',
  `| node -e 0 | ${(nodeStart.seconds * 1000).toFixed(0)} ms |`,
  `| bq validate one-file.json | ${(bqStart.seconds * 1000).toFixed(0)} ms |`,
  '',
  `bq / node start: **${(bqStart.seconds / nodeStart.seconds).toFixed(2)}×** (target ≤ 3×).`,
]
if (big) {
  const bigFile = path.join(tmp, 'orders-1000000.jsonl')
  await generate(bigFile, 1_000_000)
  const run = measure(['node', bin, 'validate', bigFile, '--registry', registry, '--quiet'])
  report.push('', `1,000,000-line JSONL (${(1_000_000 / run.seconds).toFixed(0)} lines/s): peak RSS **${run.rssMiB.toFixed(0)} MiB** (streamed; bounded by the longest line, not the file).`)
}
console.log(report.join('\n'))
