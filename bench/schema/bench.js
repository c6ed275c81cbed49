// bench/schema: `bq schema compat --against` and `bq schema check` on a generated registry of 500
// schemas in a git repository, against baselines measured in the same run: reading the old side
// alone (`git show` per file, and one `git cat-file --batch`), and `bq validate` with the same
// registry (bq's start plus compiling every schema).
// Usage: node bench/schema/bench.js [schemas=500]
import {execFileSync, spawnSync} from 'node:child_process'
import {mkdirSync, rmSync, writeFileSync} from 'node:fs'
import {loadavg} from 'node:os'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

import {sampleSchema as schema} from './sample-schema.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const root = path.resolve(here, '..', '..')
const bin = path.join(root, 'bin', 'run.js')
const count = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 500)
const repo = path.join(root, 'bench', 'tmp', `schema-registry-${count}`)

const git = (...args) => execFileSync('git', ['-c', 'user.name=bench', '-c', 'user.email=bench@bq.invalid', '-c', 'commit.gpgsign=false', ...args], {cwd: repo, stdio: 'pipe'})

function generate() {
  rmSync(repo, {recursive: true, force: true})
  mkdirSync(path.join(repo, 'schemas'), {recursive: true})
  const entries = []
  for (let i = 0; i < count; i++) {
    const file = `schemas/event-${i}.json`
    writeFileSync(path.join(repo, file), JSON.stringify(schema(i), null, 2))
    entries.push({urn: `urn:babel:bench:event-${i}`, schema: file, owner: 'bench'})
  }
  writeFileSync(path.join(repo, 'registry.json'), JSON.stringify({schemas: entries}, null, 2))
  git('init', '-q')
  git('add', '-A')
  git('commit', '-q', '-m', 'registry')
  const messages = entries.map((e, i) => JSON.stringify({job: e.urn, trace_id: '7b3f9c2a-e41d-4a1b-9c2a-000000000000', data: {id: i + 1, amount: {value: 5, currency: 'EUR'}, status: 'new'}, meta: {id: 'f1e2d3c4-b5a6-4789-90ab-cdef01234567', queue: 'bench', lang: 'node', schema_version: 1, created_at: 1749132727000}, attempts: 0}))
  writeFileSync(path.join(repo, 'messages.jsonl'), messages.join('\n') + '\n')
}

/** Changes `share` of the schemas in the work tree: every 20th narrows an enum (breaking), the others in the share add a field. */
function change(share) {
  const every = Math.round(1 / share)
  for (let i = 0; i < count; i += every) writeFileSync(path.join(repo, `schemas/event-${i}.json`), JSON.stringify(schema(i, i % (every * 2) === 0 ? 1 : 2), null, 2))
}

function measure(command, args, options = {}) {
  const result = spawnSync('/usr/bin/time', ['-f', '%e %M', command, ...args], {cwd: repo, encoding: 'utf8', stdio: [options.input === undefined ? 'ignore' : 'pipe', 'ignore', 'pipe'], input: options.input, maxBuffer: 1 << 28})
  const [seconds, kb] = result.stderr.trim().split('\n').pop().split(' ').map(Number)
  return {seconds, rssMiB: kb / 1024, status: result.status}
}
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
function repeat(command, args, times = 3, options) {
  const runs = Array.from({length: times}, () => measure(command, args, options))
  return {seconds: median(runs.map((r) => r.seconds)), rssMiB: Math.max(...runs.map((r) => r.rssMiB)), status: runs[0].status}
}

generate()
const files = Array.from({length: count}, (_, i) => `schemas/event-${i}.json`)
const catInput = files.map((f) => `HEAD:${f}\n`).join('')
// `git show` once per file, as a script would: the cost of reading the old side naively.
writeFileSync(path.join(repo, 'show-all.sh'), `for f in ${files.join(' ')}; do git show HEAD:$f > /dev/null; done\n`)
const showAll = repeat('sh', ['show-all.sh'], 1)
const catFile = repeat('git', ['cat-file', '--batch'], 3, {input: catInput})
const validate = repeat('node', [bin, 'validate', 'messages.jsonl', '--registry', 'registry.json', '--quiet'])
const unchanged = repeat('node', [bin, 'schema', 'compat', '--registry', 'registry.json', '--against', 'HEAD'])
change(0.1)
const tenth = repeat('node', [bin, 'schema', 'compat', '--registry', 'registry.json', '--against', 'HEAD'])
change(1)
const all = repeat('node', [bin, 'schema', 'compat', '--registry', 'registry.json', '--against', 'HEAD'])
const check = repeat('node', [bin, 'schema', 'check', '--registry', 'registry.json'])
const nodeStart = repeat('node', ['-e', '0'], 5)

const row = (label, r, base) => `| ${label} | ${r.seconds.toFixed(2)} s | ${r.rssMiB.toFixed(0)} MiB | exit ${r.status} | ${base ? `${(r.seconds / base.seconds).toFixed(2)}×` : '—'} |`
console.log([
  `### bench/schema — ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC, ${count} schemas in a git repository`,
  '',
  '| run | time (median) | peak RSS | exit | vs bq validate |',
  '| --- | ---: | ---: | ---: | ---: |',
  row(`baseline: \`git show HEAD:file\` × ${count} (one run)`, showAll, validate),
  row(`baseline: one \`git cat-file --batch\` for ${count} files`, catFile, validate),
  row(`baseline: \`bq validate\` ${count} envelopes, same registry`, validate),
  row('`bq schema compat --against HEAD`, nothing changed', unchanged, validate),
  row(`\`bq schema compat --against HEAD\`, ${Math.ceil(count / 10)} changed (half breaking)`, tenth, validate),
  row(`\`bq schema compat --against HEAD\`, all ${count} changed`, all, validate),
  row(`\`bq schema check\`, ${count} schemas`, check, validate),
  row('`node -e 0`', nodeStart, validate),
  '',
  `compat (all ${count} changed) / \`git show\` per file: **${(all.seconds / showAll.seconds).toFixed(2)}×**; compat (${Math.ceil(count / 10)} changed) / bq validate: **${(tenth.seconds / validate.seconds).toFixed(2)}×**; check / bq validate: **${(check.seconds / validate.seconds).toFixed(2)}×**.`,
  '',
  `load average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`,
].join('\n'))
