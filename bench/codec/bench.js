// bench/codec: decode + reset of 100,000 dead-lettered envelopes (what a redrive does to each
// message), and decode + the fields a binding projects (what replay and peek do), against
// JSON.parse of the same lines, interleaved in one process so that load on the machine hits
// every side alike. Usage:
//   node bench/codec/bench.js [N=100000] [RUNS=5] [--before <dist dir of another build>] [--dist <dir>]
// (`--dist` times another build than ./dist, for example one made with tsc --outDir.)
import path from 'node:path'
import {fileURLToPath, pathToFileURL} from 'node:url'
import {randomUUID} from 'node:crypto'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..')
const numbers = process.argv.slice(2).filter((a) => /^\d+$/.test(a)).map(Number)
const [count = 100_000, runs = 5] = numbers
const beforeAt = process.argv.indexOf('--before')
const distAt = process.argv.indexOf('--dist')
const builds = [['bq', distAt > 0 ? path.resolve(process.argv[distAt + 1]) : path.join(root, 'dist')]]
if (beforeAt > 0) builds.unshift(['bq before', path.resolve(process.argv[beforeAt + 1])])

const codecs = await Promise.all(builds.map(async ([name, dist]) => [name, await import(pathToFileURL(path.join(dist, 'lib', 'envelope', 'index.js')).href)]))

const lines = Array.from({length: count}, (_, i) => Buffer.from(JSON.stringify({
  job: 'urn:babel:orders:created', trace_id: randomUUID(),
  data: {order_id: i + 1, amount: (i % 1000) / 10, currency: 'EUR', items: [{sku: `A-${i}`, qty: 2}, {sku: 'B', qty: 1}], note: 'caf\u00e9 "quoted"'},
  meta: {id: randomUUID(), queue: 'orders', lang: 'php', schema_version: 1, created_at: 1749132727000 + i},
  attempts: 3,
  dead_letter: {reason: 'failed', error: 'boom', exception: 'RuntimeException', failed_at: 1749132728000 + i, original_queue: 'orders', attempts: 3, lang: 'php'},
})))

let sink = 0
const only = process.env.BQ_BENCH_ONLY // one side alone, for callgrind
const sides = [
  ['JSON.parse', () => { for (const line of lines) sink += JSON.parse(line.toString('utf8')).attempts }],
  ...codecs.map(([name, codec]) => [`${name} decode + reset`, () => {
    for (const line of lines) sink += codec.resetForRedriveBytes(codec.decodeEnvelope(line)).length
  }]),
  // What replay and peek do to each message: decode and read the fields a binding projects.
  ...codecs.map(([name, codec]) => [`${name} decode + fields`, () => {
    for (const line of lines) sink += codec.fieldsOf(codec.decodeEnvelope(line)).attempts
  }]),
].filter(([name]) => only === undefined || name.startsWith(only))
const times = new Map(sides.map(([name]) => [name, []]))
for (const [, work] of sides) work() // warm up every side once
for (let run = 0; run < runs; run++) {
  for (const [name, work] of sides) {
    // CPU time of this process, not wall time: other work on the machine waits outside it.
    const start = process.cpuUsage()
    work()
    const used = process.cpuUsage(start)
    times.get(name).push((used.user + used.system) / 1000)
  }
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const base = median(times.get('JSON.parse') ?? [1])
console.log(`bench/codec: ${count.toLocaleString('en')} DLQ envelopes, CPU time, median of ${runs} interleaved runs (load average ${(await import('node:os')).loadavg().map((l) => l.toFixed(2)).join(' ')})`)
for (const [name, values] of times) console.log(`${name.padEnd(26)} ${median(values).toFixed(0).padStart(6)} ms  ${(median(values) / base).toFixed(2)}× JSON.parse  runs: ${values.map((v) => v.toFixed(0)).join(' ')}`)
if (sink === 0) console.log('')
