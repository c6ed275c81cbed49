// bench/redrive big: peak RSS of a 1,000,000-message redrive (embedded store and Redis), and
// `bq peek --limit 20` on a queue holding 1,000,000 messages.
// Usage: node bench/redrive/big.js [sqlite|redis ...] [N=1000000]
import {spawnSync} from 'node:child_process'
import path from 'node:path'
import {fileURLToPath} from 'node:url'
import {mkdirSync, rmSync} from 'node:fs'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..', '..')
const tmp = path.join(root, 'bench', 'tmp')
mkdirSync(tmp, {recursive: true})
const n = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 1_000_000)
const kinds = process.argv.slice(2).filter((a) => !/^\d+$/.test(a))
const urls = {redis: process.env.BQ_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0', sqlite: `sqlite://${path.join(tmp, 'big.db')}`}

function timed(args) {
  const result = spawnSync('/usr/bin/time', ['-f', '%e %M', ...args], {encoding: 'utf8', maxBuffer: 1 << 28})
  if (result.status !== 0) throw new Error(`${args.join(' ')} failed: ${result.stderr.slice(-2000)}`)
  const [seconds, kb] = result.stderr.trim().split('\n').pop().split(' ').map(Number)
  return {seconds, rssMiB: kb / 1024}
}

const lines = [`### bench/redrive big — ${new Date().toISOString().slice(0, 10)}, ${n.toLocaleString('en')} messages`, '', '| broker | redrive time | messages/s | peak RSS | peek --limit 20 on the full queue |', '| --- | ---: | ---: | ---: | ---: |']
for (const kind of kinds.length ? kinds : ['sqlite', 'redis']) {
  if (kind === 'sqlite') rmSync(path.join(tmp, 'big.db'), {force: true})
  const url = urls[kind]
  const queue = `bench-big-${Date.now().toString(36)}`
  const seeded = spawnSync('node', [path.join(here, 'seed.js'), url, queue, String(n)], {stdio: 'inherit'})
  if (seeded.status !== 0) throw new Error('seeding failed')
  const peek = timed(['node', path.join(root, 'bin', 'run.js'), 'peek', `${queue}.dlq`, '--limit', '20', '-b', url])
  const run = timed(['node', path.join(root, 'bin', 'run.js'), 'dlq', 'redrive', queue, '--yes', '-b', url])
  lines.push(`| ${kind} | ${run.seconds.toFixed(1)} s | ${Math.round(n / run.seconds).toLocaleString('en')} | **${run.rssMiB.toFixed(0)} MiB** | ${(peek.seconds * 1000).toFixed(0)} ms |`)
  if (kind === 'redis') spawnSync('redis-cli', ['del', queue])
}
console.log(lines.join('\n'))
