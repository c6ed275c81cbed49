// bench/regex: `bq validate` of JSONL envelopes against pattern-heavy schemas, with the patterns
// matched by RE2JS (bq's linear-time engine, src/lib/linear-regexp.ts) and by V8's backtracking
// RegExp (BQ_BENCH_NATIVE_REGEXP=1, a switch for this bench only), in the same run.
// Usage: node bench/regex/bench.js [lines=100000] [runs=3]
import {spawnSync} from 'node:child_process'
import {createWriteStream, existsSync, mkdirSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..', '..')
const tmp = path.join(root, 'bench', 'tmp', 'regex')
const bin = path.join(root, 'bin', 'run.js')
const numbers = process.argv.slice(2).filter((a) => /^\d+$/.test(a)).map(Number)
const lines = numbers[0] ?? 100_000
const runs = numbers[1] ?? 3
mkdirSync(tmp, {recursive: true})

// Ten patterns per message on strings, and property names under patternProperties.
const schema = {
  type: 'object',
  required: ['order_id', 'sku', 'currency', 'email', 'ref', 'placed', 'tags'],
  properties: {
    order_id: {type: 'string', pattern: '^ord_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'},
    sku: {type: 'string', pattern: '^[A-Z]{2,4}-\\d{4,8}(-[A-Z0-9]{1,3})?$'},
    currency: {type: 'string', pattern: '^[A-Z]{3}$'},
    email: {type: 'string', pattern: '^[\\w.+-]+@[\\w-]+(\\.[\\w-]+)+$'},
    ref: {type: 'string', pattern: '^(INV|CRN|PO)/\\d{4}/\\d+$'},
    placed: {type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2})$'},
    note: {type: 'string', pattern: '^[^<>]{0,200}$'},
    tags: {type: 'array', items: {type: 'string', pattern: '^[a-z][a-z0-9_-]{0,31}$'}},
  },
  patternProperties: {'^x-[a-z][a-z-]*$': {type: 'string', pattern: '\\S'}},
}

async function generate(file, count) {
  if (existsSync(file)) return
  const out = createWriteStream(file)
  for (let i = 0; i < count; i++) {
    const hex = i.toString(16).padStart(8, '0')
    const data = {
      order_id: `ord_${hex}-0000-4000-8000-${hex}${hex.slice(0, 4)}`, sku: `AB-${1000 + (i % 9000)}-X${i % 10}`, currency: i % 2 ? 'EUR' : 'USD',
      email: `customer.${i}@mail.example.com`, ref: `INV/2026/${i}`, placed: `2026-12-0${1 + (i % 9)}T10:${String(i % 60).padStart(2, '0')}:00.123Z`,
      note: i % 3 ? 'leave at the door, ring twice' : '', tags: ['priority', `batch_${i % 50}`, 'eu-west'], 'x-source': 'bench', 'x-tenant-id': `t${i % 7}`,
    }
    const line = JSON.stringify({job: 'urn:babel:bench:patterns', trace_id: `${hex}-0000-4000-8000-000000000000`, data, meta: {id: `${hex}-1111-4000-8000-000000000000`, queue: 'orders', lang: 'node', schema_version: 1, created_at: 1796500000000 + i}, attempts: 0})
    if (!out.write(line + '\n')) await new Promise((r) => out.once('drain', r))
  }
  await new Promise((r) => out.end(r))
}

function measure(args, env) {
  const result = spawnSync('/usr/bin/time', ['-f', '%e %M', ...args], {encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'], env: {...process.env, ...env}, maxBuffer: 1 << 26})
  const [seconds, kb] = result.stderr.trim().split('\n').pop().split(' ').map(Number)
  return {seconds, rssMiB: kb / 1024, status: result.status}
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
function repeat(args, env, times) {
  // Interleaved by the caller; here one set of runs.
  const all = Array.from({length: times}, () => measure(args, env))
  return {seconds: median(all.map((r) => r.seconds)), rssMiB: Math.max(...all.map((r) => r.rssMiB)), status: all[0].status}
}

writeFileSync(path.join(tmp, 'patterns.json'), JSON.stringify(schema, null, 2))
writeFileSync(path.join(tmp, 'registry.json'), JSON.stringify({schemas: [{urn: 'urn:babel:bench:patterns', schema: 'patterns.json'}]}))
const file = path.join(tmp, `patterns-${lines}.jsonl`)
await generate(file, lines)
const args = ['node', bin, 'validate', file, '--registry', path.join(tmp, 'registry.json'), '--quiet']
// Alternate the two engines so that load on a shared machine falls on both alike.
const native = []
const linear = []
for (let i = 0; i < runs; i++) {
  native.push(repeat(args, {BQ_BENCH_NATIVE_REGEXP: '1'}, 1))
  linear.push(repeat(args, {}, 1))
}
// One hostile message: ^(a+)+$ against 25 a's and a "!" (each further "a" doubles V8's time; at
// 41 it runs for days).
writeFileSync(path.join(tmp, 'evil.json'), JSON.stringify({type: 'object', properties: {name: {type: 'string', pattern: '^(a+)+$'}}}))
writeFileSync(path.join(tmp, 'evil-registry.json'), JSON.stringify({schemas: [{urn: 'urn:babel:bench:evil', schema: 'evil.json'}]}))
writeFileSync(path.join(tmp, 'evil.jsonl'), JSON.stringify({job: 'urn:babel:bench:evil', data: {name: `${'a'.repeat(25)}!`}, meta: {id: 'evil'}}) + '\n')
const evilArgs = ['node', bin, 'validate', path.join(tmp, 'evil.jsonl'), '--registry', path.join(tmp, 'evil-registry.json'), '--quiet']
const evilBefore = measure(evilArgs, {BQ_BENCH_NATIVE_REGEXP: '1'})
const evilAfter = measure(evilArgs, {})
const summary = (list) => ({seconds: median(list.map((r) => r.seconds)), rssMiB: Math.max(...list.map((r) => r.rssMiB)), status: list[0].status})
const before = summary(native)
const after = summary(linear)
const row = (name, r) => `| ${name} | ${r.seconds.toFixed(2)} s | ${Math.round(lines / r.seconds).toLocaleString('en')} | ${r.rssMiB.toFixed(0)} MiB | exit ${r.status} |`
console.log([
  `### bench/regex — ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${lines.toLocaleString('en')} lines, 10 patterns per message (median of ${runs})`,
  '',
  '| engine | time | lines/s | peak RSS | exit |',
  '| --- | ---: | ---: | ---: | ---: |',
  row('before: V8 RegExp (backtracking)', before),
  row('after: RE2JS (linear time)', after),
  '',
  `after / before: **${(after.seconds / before.seconds).toFixed(2)}×** the time`,
  '',
  '| one message, `^(a+)+$` against 25 a\'s and "!" | time | exit |',
  '| --- | ---: | ---: |',
  `| before: V8 RegExp | ${evilBefore.seconds.toFixed(2)} s | exit ${evilBefore.status} |`,
  `| after: RE2JS | ${evilAfter.seconds.toFixed(2)} s | exit ${evilAfter.status} |`,
  '',
  `load average at the end: ${spawnSync('cat', ['/proc/loadavg'], {encoding: 'utf8'}).stdout.split(' ').slice(0, 3).join(' ')}`,
].join('\n'))
