// bench/schema/check.js: `bq schema check` on a generated registry of 500 schemas (the schemas of
// bench/schema/bench.js), this build against an earlier build's bin/run.js in the same run.
// Usage: node bench/schema/check.js [schemas=500] [--before <package dir>] [runs=5]
import {spawnSync} from 'node:child_process'
import {loadavg} from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import {writeSampleRegistry} from './sample-schema.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..', '..')
const bin = path.join(root, 'bin', 'run.js')
const numbers = process.argv.slice(2).filter((a) => /^\d+$/.test(a)).map(Number)
const count = numbers[0] ?? 500
const runs = numbers[1] ?? 5
const beforeAt = process.argv.indexOf('--before')
const beforeBin = beforeAt > 0 ? path.resolve(process.argv[beforeAt + 1], 'bin', 'run.js') : undefined
const dir = path.join(root, 'bench', 'tmp', `check-registry-${count}`)

writeSampleRegistry(dir, count)

function measure(args) {
  const result = spawnSync('/usr/bin/time', ['-f', '%e %M', ...args], {cwd: dir, encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe']})
  const [seconds, kb] = result.stderr.trim().split('\n').pop().split(' ').map(Number)
  return {seconds, rssMiB: kb / 1024, status: result.status}
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const series = {after: [], before: [], start: []}
// Interleaved, so that load on a shared machine falls on each alike.
for (let i = 0; i < runs; i++) {
  if (beforeBin) series.before.push(measure(['node', beforeBin, 'schema', 'check', '--registry', 'registry.json']))
  series.after.push(measure(['node', bin, 'schema', 'check', '--registry', 'registry.json']))
  series.start.push(measure(['node', bin, '--version']))
}
const summary = (list) => ({seconds: median(list.map((r) => r.seconds)), rssMiB: Math.max(...list.map((r) => r.rssMiB)), status: list[0].status})
const after = summary(series.after)
const start = summary(series.start)
const row = (name, r) => `| ${name} | ${r.seconds.toFixed(2)} s | ${r.rssMiB.toFixed(0)} MiB | exit ${r.status} |`
const lines = [
  `### bench/schema/check.js — ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${count} schemas (median of ${runs})`,
  '',
  '| run | time | peak RSS | exit |',
  '| --- | ---: | ---: | ---: |',
]
if (beforeBin) lines.push(row(`before: \`bq schema check\` (${path.relative(root, beforeBin)})`, summary(series.before)))
lines.push(row('after: `bq schema check`', after), row('`bq --version` (bq\'s start)', start), '')
if (beforeBin) lines.push(`after / before: **${(after.seconds / summary(series.before).seconds).toFixed(2)}×**`, '')
lines.push(`load average at the end: ${loadavg().map((n) => n.toFixed(2)).join(' ')}`)
console.log(lines.join('\n'))
