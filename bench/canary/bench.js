// bench/canary: a canary redrive (--canary N --ramp R --watch W) against a plain redrive of the
// same number of messages, on the same broker in the same run, each with a consumer acknowledging
// everything (bench/canary/consumer.js). The overhead of watching is the canary's time against the
// plain redrive's plus the sum of the watch windows the canary waited out.
// Usage: node bench/canary/bench.js [N=20000] [--canary 100] [--ramp 4] [--watch 2s] [URL=redis://127.0.0.1:6379/0]
import {spawn, spawnSync} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {loadavg, tmpdir} from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..', '..')
const argv = process.argv.slice(2)
const option = (name, fallback) => (argv.includes(name) ? argv[argv.indexOf(name) + 1] : fallback)
const n = Number(argv.find((a) => /^\d+$/.test(a)) ?? 20_000)
const url = argv.find((a) => /^[a-z]+:\/\//.test(a)) ?? process.env.BQ_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0'
const canary = option('--canary', '100')
const ramp = option('--ramp', '4')
const watch = option('--watch', '2s')
const ledgerDir = mkdtempSync(path.join(tmpdir(), 'bq-canary-bench-'))
const env = {...process.env, BQ_LEDGER: path.join(ledgerDir, 'ledger.db'), NO_COLOR: '1'}

function seed(queue) {
  const result = spawnSync('node', [path.join(root, 'bench', 'redrive', 'seed.js'), url, queue, String(n)], {stdio: 'inherit'})
  if (result.status !== 0) throw new Error('seeding failed')
}

/** Runs bq with a consumer on the queue; the consumer stops once it took all n. */
async function run(queue, extra) {
  const consumer = spawn('node', [path.join(here, 'consumer.js'), url, queue], {stdio: ['ignore', 'pipe', 'inherit']})
  let taken = ''
  consumer.stdout.on('data', (chunk) => (taken += chunk))
  const started = process.hrtime.bigint()
  const bq = spawnSync('node', [path.join(root, 'bin', 'run.js'), 'dlq', 'redrive', queue, '--yes', '--json', '-b', url, ...extra], {encoding: 'utf8', env, maxBuffer: 1 << 28})
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  if (bq.status !== 0) throw new Error(`bq exited ${bq.status}: ${bq.stderr}`)
  consumer.kill('SIGTERM')
  await new Promise((resolve) => consumer.on('close', resolve))
  return {seconds, result: JSON.parse(bq.stdout).result, taken: Number(taken.trim())}
}

const stamp = Date.now().toString(36)
const plainQueue = `bench-plain-${stamp}`
seed(plainQueue)
const plain = await run(plainQueue, [])
const canaryQueue = `bench-canary-${stamp}`
seed(canaryQueue)
const staged = await run(canaryQueue, ['--canary', canary, '--ramp', ramp, '--watch', watch])
rmSync(ledgerDir, {recursive: true, force: true})

const stages = staged.result.stages
// As waited (each window plus the last read of the DLQ in it), and as asked (stages × --watch).
const watched = stages.reduce((sum, stage) => sum + stage.watch_seconds, 0)
const nominal = stages.filter((stage) => stage.moved > 0).length * (staged.result.canary.watch_seconds)
const expected = plain.seconds + nominal
const lines = [
  `### bench/canary — ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${n.toLocaleString('en')} messages on ${url.replace(/\/\/[^@]*@/, '//')}`,
  '',
  '| run | time | moved | consumer took | stages | watch windows (asked / as waited) |',
  '| --- | ---: | ---: | ---: | ---: | ---: |',
  `| plain \`dlq redrive\` | ${plain.seconds.toFixed(2)} s | ${plain.result.counts.redriven} | ${plain.taken} | – | – |`,
  `| \`--canary ${canary} --ramp ${ramp} --watch ${watch}\` | ${staged.seconds.toFixed(2)} s | ${staged.result.counts.redriven} | ${staged.taken} | ${stages.map((s) => s.moved).join(', ')} | ${nominal.toFixed(1)} s / ${watched.toFixed(1)} s |`,
  '',
  `canary / (plain + the windows asked for): **${(staged.seconds / expected).toFixed(2)}×** (${staged.seconds.toFixed(2)} s against ${expected.toFixed(2)} s); returned: ${staged.result.returned.count}`,
  '',
  `load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
]
console.log(lines.join('\n'))
