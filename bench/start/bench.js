// bench/start: cold start of `bq validate one.json` and `bq --help` against `node -e 0`, all
// interleaved in one run (median of RUNS each), wall time and CPU time (user + system, from
// /usr/bin/time), which other work on the machine disturbs less. Usage:
//   node bench/start/bench.js [RUNS=11] [--before <package dir of another build>]
// A "before" package dir holds bin/, dist/, package.json and oclif.manifest.json of that build.
import {spawnSync} from 'node:child_process'
import {loadavg} from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const runs = Number(process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? 11)
const beforeAt = process.argv.indexOf('--before')
const one = path.resolve(root, '..', 'shared', 'conformance', 'fixtures', 'order-created.json')
const builds = [['bq', root]]
if (beforeAt > 0) builds.unshift(['bq before', path.resolve(process.argv[beforeAt + 1])])

const commands = [['node -e 0', ['node', '-e', '0']]]
for (const [name, dir] of builds) {
  const bin = path.join(dir, 'bin', 'run.js')
  commands.push([`${name} validate one.json`, ['node', bin, 'validate', one]], [`${name} --help`, ['node', bin, '--help']])
}

function measure(args) {
  const result = spawnSync('/usr/bin/time', ['-f', '%e %U %S', ...args], {encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe']})
  const [wall, user, system] = result.stderr.trim().split('\n').pop().split(' ').map(Number)
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}`)
  return {wall: wall * 1000, cpu: (user + system) * 1000}
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const results = new Map(commands.map(([name]) => [name, []]))
const loadBefore = loadavg()[0]
for (let run = 0; run < runs; run++) for (const [name, args] of commands) results.get(name).push(measure(args))

const node = results.get('node -e 0')
const nodeWall = median(node.map((r) => r.wall))
const nodeCpu = median(node.map((r) => r.cpu))
console.log(`bench/start: median of ${runs} interleaved runs; load average ${loadBefore.toFixed(2)} at the start, ${loadavg()[0].toFixed(2)} at the end`)
console.log('| command | wall | × node -e 0 | CPU | × node -e 0 |')
console.log('| --- | ---: | ---: | ---: | ---: |')
for (const [name, values] of results) {
  const wall = median(values.map((r) => r.wall))
  const cpu = median(values.map((r) => r.cpu))
  console.log(`| ${name} | ${wall.toFixed(0)} ms | ${(wall / nodeWall).toFixed(2)}× | ${cpu.toFixed(0)} ms | ${(cpu / nodeCpu).toFixed(2)}× |`)
}
