// bench/schema/compare.js: `bq schema check` (bin/run.js, the real CLI) against the Go reference
// `bqschema check` (babelqueue-registry's cmd/bqschema) on the same generated registry of 500
// schemas, in the same run, and where bq's time goes: node's start, oclif and the command's
// modules, reading the registry, the $ref checks, the proofs that each schema compiles, output.
// bq is timed cold (BQ_SCHEMA_CHECK_CACHE=off: every schema proven, as on a fresh CI machine)
// and warm (its cache of proven schemas, src/lib/schema/check-cache.ts, filled by the first run).
//
// Usage: BQSCHEMA=/path/to/bqschema node bench/schema/compare.js [schemas=500] [runs=10] [--before <package dir>]
// (--before: also time an earlier build's bin/run.js, e.g. a `git archive` of an older commit built
// under bench/tmp/, as bench/schema/check.js does.)
//
// The reference is not part of bq: build it from its public source with Go (see bench/RESULTS.md)
// and name the binary in BQSCHEMA. Without it the bench says so and times bq alone. Timing is
// hyperfine's (`-N`, no shell) when it is on the PATH, else interleaved runs and their median.
import {spawnSync} from 'node:child_process'
import {accessSync, constants, mkdtempSync, readFileSync, readdirSync, rmSync} from 'node:fs'
import {cpus, loadavg, tmpdir} from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import {writeSampleRegistry} from './sample-schema.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..', '..')
const bin = path.join(root, 'bin', 'run.js')
const numbers = process.argv.slice(2).filter((a) => /^\d+$/.test(a)).map(Number)
const count = numbers[0] ?? 500
const runs = numbers[1] ?? 10
const beforeAt = process.argv.indexOf('--before')
const beforeBin = beforeAt > 0 ? path.resolve(process.argv[beforeAt + 1], 'bin', 'run.js') : undefined
const dir = path.join(root, 'bench', 'tmp', `compare-registry-${count}`)
writeSampleRegistry(dir, count)
// A cache folder of the bench's own, empty at the start.
const cacheHome = path.join(root, 'bench', 'tmp', 'compare-cache')
rmSync(cacheHome, {recursive: true, force: true})
process.env.XDG_CACHE_HOME = cacheHome

const reference = process.env.BQSCHEMA
let referenceMissing
if (reference === undefined || reference === '') referenceMissing = 'BQSCHEMA is not set'
else {
  try {
    accessSync(reference, constants.X_OK)
  } catch {
    referenceMissing = `BQSCHEMA=${reference} is not an executable file`
  }
}
if (referenceMissing !== undefined) console.error(`compare.js: the Go reference is absent (${referenceMissing}): bq is timed alone, no ratio. Build bqschema and set BQSCHEMA=/path/to/bqschema.`)

const commands = [
  ...(referenceMissing === undefined ? [{key: 'ref', name: 'reference: `bqschema check` (Go)', argv: [reference, 'check', '--registry', 'registry.json']}] : []),
  ...(beforeBin ? [{key: 'before', name: `before: \`bq schema check\` (${path.relative(root, beforeBin)})`, argv: ['node', beforeBin, 'schema', 'check', '--registry', 'registry.json']}] : []),
  {key: 'cold', name: 'bq: `bq schema check`, cold (no cache)', argv: ['env', 'BQ_SCHEMA_CHECK_CACHE=off', 'node', bin, 'schema', 'check', '--registry', 'registry.json']},
  {key: 'warm', name: 'bq: `bq schema check`, warm (proofs cached)', argv: ['node', bin, 'schema', 'check', '--registry', 'registry.json']},
  {key: 'version', name: '`bq --version` (node + oclif start)', argv: ['node', bin, '--version']},
  {key: 'node', name: '`node -e 0` (node\'s own start)', argv: ['node', '-e', '0']},
]

// Every command must succeed on the registry, or the times mean nothing.
for (const command of commands) {
  const result = spawnSync(command.argv[0], command.argv.slice(1), {cwd: dir, encoding: 'utf8'})
  if (result.status !== 0) throw new Error(`${command.argv.join(' ')} exited ${result.status}: ${result.stderr}`)
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const hasHyperfine = spawnSync('hyperfine', ['--version']).status === 0
const timings = hasHyperfine ? withHyperfine() : interleaved()

// hyperfine runs one command's runs back to back; on a shared machine a burst of load then falls
// on one command only. So it is called in rounds (two runs of each command per round, after one
// warm-up), and each command's times are gathered over all the rounds.
function withHyperfine() {
  const scratch = mkdtempSync(path.join(tmpdir(), 'bq-compare-'))
  const json = path.join(scratch, 'times.json')
  const quote = (arg) => (/^[\w./:=-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, "'\\''")}'`)
  const gathered = commands.map(() => ({times: [], cpu: 0}))
  for (let round = 0; round < Math.ceil(runs / 2); round++) {
    const result = spawnSync('hyperfine', ['-N', '--style', 'none', '-w', '1', '-r', '2', '--export-json', json, ...commands.map((c) => c.argv.map(quote).join(' '))], {cwd: dir, encoding: 'utf8'})
    if (result.status !== 0) throw new Error(`hyperfine failed: ${result.stderr}`)
    JSON.parse(readFileSync(json, 'utf8')).results.forEach((r, i) => {
      gathered[i].times.push(...r.times)
      gathered[i].cpu += (r.user + r.system) * r.times.length
    })
  }
  rmSync(scratch, {recursive: true, force: true})
  return gathered.map(({times, cpu}) => {
    const mean = times.reduce((a, b) => a + b, 0) / times.length
    const stddev = Math.sqrt(times.reduce((a, b) => a + (b - mean) ** 2, 0) / (times.length - 1))
    return {median: median(times), mean, stddev, cpu: cpu / times.length}
  })
}

// Interleaved, so that load on a shared machine falls on each alike.
function interleaved() {
  const times = commands.map(() => [])
  for (let i = 0; i < runs + 1; i++) {
    commands.forEach((command, c) => {
      const start = process.hrtime.bigint()
      spawnSync(command.argv[0], command.argv.slice(1), {cwd: dir, stdio: 'ignore'})
      if (i > 0) times[c].push(Number(process.hrtime.bigint() - start) / 1e9)
    })
  }
  return times.map((list) => ({median: median(list), mean: list.reduce((a, b) => a + b, 0) / list.length, stddev: undefined, cpu: undefined}))
}

/**
 * Where one `bq schema check` spends its time, from V8's CPU profile: a sample under checkRegistry
 * goes to the first bucket whose frame is on its stack (else to reading the registry); one under
 * the report's writer is output; the rest is loading modules, oclif and the command's dispatch.
 */
const buckets = [
  {name: 'proofs: meta-schema, patterns, ajv compile when needed', frames: ['proveCompiles', 'loadValidator', 'compile']},
  {name: '$ref checks', frames: ['refProblems']},
]
const READ = 'reading the registry: files, paths, JSON, URNs'
const OUTPUT = 'output (the report)'
function split() {
  const scratch = mkdtempSync(path.join(tmpdir(), 'bq-compare-prof-'))
  const start = process.hrtime.bigint()
  spawnSync('node', ['--cpu-prof', '--cpu-prof-interval', '250', '--cpu-prof-dir', scratch, bin, 'schema', 'check', '--registry', 'registry.json'], {cwd: dir, stdio: 'ignore', env: {...process.env, BQ_SCHEMA_CHECK_CACHE: 'off'}})
  const wall = Number(process.hrtime.bigint() - start) / 1e6
  const profile = JSON.parse(readFileSync(path.join(scratch, readdirSync(scratch)[0]), 'utf8'))
  rmSync(scratch, {recursive: true, force: true})
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]))
  const parent = new Map()
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id)
  const ms = {'node start (before the profile)': wall - (profile.endTime - profile.startTime) / 1000, 'modules, oclif, command dispatch': 0, 'garbage collection': 0, 'idle (waiting on I/O)': 0}
  for (const name of [READ, ...buckets.map((b) => b.name), OUTPUT]) ms[name] = 0
  profile.samples.forEach((id, i) => {
    const delta = (profile.timeDeltas[i] ?? 0) / 1000
    const leaf = nodes.get(id).callFrame.functionName
    if (leaf === '(garbage collector)') return (ms['garbage collection'] += delta)
    if (leaf === '(idle)') return (ms['idle (waiting on I/O)'] += delta)
    const stack = []
    for (let at = id; at !== undefined; at = parent.get(at)) stack.push(nodes.get(at).callFrame.functionName)
    let bucket = 'modules, oclif, command dispatch'
    if (stack.includes('checkRegistry')) bucket = buckets.find((b) => stack.some((f) => b.frames.includes(f)))?.name ?? READ
    else if (stack.includes('writeSchemaReport') || stack.includes('flush')) bucket = OUTPUT
    ms[bucket] += delta
  })
  return {wall, ms}
}
const splits = Array.from({length: 3}, split)

const [commit] = spawnSync('git', ['rev-parse', '--short', 'HEAD'], {cwd: root, encoding: 'utf8'}).stdout.trim().split('\n')
const dirty = spawnSync('git', ['status', '--porcelain', '--', 'src', 'scripts'], {cwd: root, encoding: 'utf8'}).stdout.trim() !== ''
const nodeVersion = process.version
const go = referenceMissing === undefined ? spawnSync('go', ['version'], {encoding: 'utf8'}).stdout?.trim() : undefined
const s = (seconds) => (seconds === undefined ? '–' : `${(seconds * 1000).toFixed(0)} ms`)
const lines = [
  `### bench/schema/compare.js — ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${count} schemas, ${runs} runs each (${hasHyperfine ? 'hyperfine -N, in rounds of 2 runs each' : 'interleaved, median'})`,
  '',
  `Machine: ${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, Node ${nodeVersion}${go ? `, reference built with ${go}` : ''}; bq at ${commit}${dirty ? ' (with uncommitted changes)' : ''}.`,
  '',
  '| run | median | mean | σ | CPU (user+sys, mean) |',
  '| --- | ---: | ---: | ---: | ---: |',
  ...commands.map((c, i) => `| ${c.name} | ${s(timings[i].median)} | ${s(timings[i].mean)} | ${s(timings[i].stddev)} | ${s(timings[i].cpu)} |`),
  '',
]
if (referenceMissing === undefined) {
  const {ref, before, cold, warm, version, node} = Object.fromEntries(commands.map((c, i) => [c.key, timings[i]]))
  const ratio = (run, name) => `${name}: **${(run.median / ref.median).toFixed(1)}×** (medians), ${(run.mean / ref.mean).toFixed(1)}× (means)${run.cpu !== undefined ? `, ${(run.cpu / ref.cpu).toFixed(1)}× in CPU time` : ''}.`
  lines.push(
    ...(before ? [ratio(before, 'before / reference')] : []),
    ratio(cold, 'bq cold / reference'),
    ratio(warm, 'bq warm / reference'),
    `The floor, bq's start alone (\`bq --version\`) / reference: ${(version.median / ref.median).toFixed(1)}×; node's own start / reference: ${(node.median / ref.median).toFixed(1)}×.`,
    '',
  )
} else lines.push(`No ratio: the Go reference is absent (${referenceMissing}).`, '')
const names = Object.keys(splits[0].ms)
lines.push(
  `Where one cold \`bq schema check\` spends its time (V8 CPU profile, median of 3 profiled runs; profiling slows it: profiled wall ${s(median(splits.map((x) => x.wall)) / 1000)}):`,
  '',
  '| part | ms | share |',
  '| --- | ---: | ---: |',
  ...names.map((name) => {
    const value = median(splits.map((x) => x.ms[name]))
    return `| ${name} | ${value.toFixed(0)} | ${((value / median(splits.map((x) => x.wall))) * 100).toFixed(0)}% |`
  }),
  '',
  `load average at the end: ${loadavg().map((n) => n.toFixed(2)).join(' ')}`,
)
console.log(lines.join('\n'))
