#!/usr/bin/env node
// Runs the test layers with node's own test runner (TypeScript through tsx), one child process per
// test file, several files at a time.
//
// Usage: node scripts/run-tests.js [layer ...] [--quick] [--jobs N] [--only SUBSTRING ...] [--broker NAME ...]
//   layers: unit conformance integration e2e reliability (default: all)
//   --quick    only files that need no broker (unit, conformance, embedded-store e2e), run as
//              --jobs groups of files, each group in one process (scripts/test-group.mjs)
//   --jobs N   files run at once (default BQ_TEST_JOBS, else 3, or 6 groups with --quick; 1 = one file at a time)
//   --only S   only files whose path contains S (repeatable: any of them)
//   --broker B only files that hold broker B or live in test/brokers/B/ (repeatable: any of them)
//
// Which files may overlap is in scripts/test-plan.js (a file's broker comes from its folder or its
// `// @test-uses` line; `// @test-alone` files run with nothing else). Each file's output is
// printed whole when it ends, headed by its wall and CPU time; the run ends with the slowest
// files and one closing line, `tests: N passed, N failed, N skipped`. scripts/slowest-tests.js
// reads those headers back from a saved log.
import {spawn} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

import {allLayers, planFiles} from './test-plan.js'

const options = parseArgs(process.argv.slice(2))
const planned = planFiles(options.layers, {quick: options.quick, only: options.only, brokers: options.brokers})
const files = options.quick ? groupFiles(planned, options.jobs) : planned
if (files.length === 0) {
  console.error('no test files found')
  process.exit(1)
}

/** A file still running longer than this is killed and counted as failed, so one hang cannot eat CI's hour. */
const fileTimeoutMs = Number(process.env.BQ_TEST_FILE_TIMEOUT_SECONDS ?? 1200) * 1000

/** GNU time, for each file's CPU seconds (Debian's `time` package; without it the CPU column says ?). */
const timeCommand = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined
const scratch = mkdtempSync(join(tmpdir(), 'bq-run-tests-'))
process.on('exit', () => rmSync(scratch, {recursive: true, force: true}))

const results = []
const running = new Map() // child pid -> {file, child}
const startedAt = Date.now()
let interrupted = false

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    interrupted = true
    for (const {child} of running.values()) killGroup(child, 'SIGTERM')
    setTimeout(() => process.exit(130), 5000).unref()
  })
}

console.log(`run-tests: ${files.length} files, up to ${options.jobs} at a time`)
await schedule(files, options.jobs)
report()

/**
 * The quick set as `jobs` groups of about equal expected wall time (the longest file first into
 * the lightest group), each run in one process: a quick file's own work is often less than a
 * process start with tsx's loader. More groups than cores (6 by default on 2) let one group's
 * waits (signals, timeouts, progress ticks) overlap another's CPU; balancing on CPU alone left
 * two of six groups done at 40 s while the rest ran to 58 s.
 */
function groupFiles(plan, jobs) {
  const groups = Array.from({length: Math.min(jobs, plan.length)}, () => ({files: [], expected: 0}))
  for (const file of [...plan].sort((a, b) => b.expected - a.expected)) {
    const lightest = groups.reduce((a, b) => (b.expected < a.expected ? b : a))
    lightest.files.push(file.path)
    lightest.expected += file.expected
  }
  return groups.map((g, i) => ({path: `quick group ${i + 1} (${g.files.length} files)`, group: g.files, layer: 'quick', resources: [], alone: false, expected: g.expected}))
}

function parseArgs(argv) {
  const parsed = {layers: [], quick: false, jobs: undefined, only: [], brokers: []}
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--quick') parsed.quick = true
    else if (arg === '--jobs') parsed.jobs = Number(argv[++i])
    else if (arg === '--only') parsed.only.push(argv[++i] ?? '')
    else if (arg === '--broker') parsed.brokers.push(argv[++i] ?? '')
    else if (allLayers.includes(arg)) parsed.layers.push(arg)
    else {
      console.error(`unknown argument "${arg}" (layers: ${allLayers.join(', ')}; flags: --quick, --jobs N, --only S, --broker B)`)
      process.exit(2)
    }
  }
  // The quick set's files are short and CPU-bound with waits between: 6 groups on 2 cores.
  parsed.jobs ??= Number(process.env.BQ_TEST_JOBS ?? (parsed.quick ? 6 : 3))
  if (!Number.isInteger(parsed.jobs) || parsed.jobs < 1) {
    console.error('--jobs must be a whole number of at least 1')
    process.exit(2)
  }
  if (parsed.layers.length === 0) parsed.layers = allLayers
  return parsed
}

/**
 * Starts files while slots are free: an `alone` file only when nothing runs (and nothing starts
 * beside it), any other file when none of its brokers is held by a running file. Files are taken
 * in plan order (alone files first, then the longest expected first), skipping those that must wait.
 */
function schedule(pending, jobs) {
  const held = new Set()
  let aloneRunning = false
  return new Promise((resolve) => {
    const pump = () => {
      if (interrupted) pending.length = 0
      for (let i = 0; i < pending.length && running.size < jobs && !aloneRunning; ) {
        const file = pending[i]
        const fits = file.alone ? running.size === 0 : file.resources.every((r) => !held.has(r))
        if (!fits) {
          if (file.alone) break // wait for the machine to empty rather than let others overtake it
          i++
          continue
        }
        pending.splice(i, 1)
        if (file.alone) aloneRunning = true
        for (const r of file.resources) held.add(r)
        runFile(file).then((result) => {
          results.push(result)
          if (file.alone) aloneRunning = false
          for (const r of file.resources) held.delete(r)
          printResult(result)
          pump()
        })
      }
      if (pending.length === 0 && running.size === 0) resolve()
    }
    pump()
  })
}

/**
 * The environment a test file runs in. A machine-wide NODE_EXTRA_CA_CERTS bundle (this kind of
 * machine points it at all of Debian's ~140 roots) is parsed by every Node process at start:
 * ~90 ms of CPU each, and the tests start bq some thousands of times. No test reaches a host that
 * bundle vouches for (their certificates are made at test time and passed explicitly), except the
 * package test's npm install, which keeps it.
 */
function testEnv(file) {
  const env = {...process.env, FORCE_COLOR: '0'}
  // The quick loop checks the first 2,500 of schema compat's 10,000 seeded pairs (CI checks all).
  if (options.quick) env.BQ_COMPAT_PAIRS ??= '2500'
  if (!file.resources.includes('npm-registry')) delete env.NODE_EXTRA_CA_CERTS
  return env
}

function runFile(file) {
  return new Promise((resolve) => {
    const began = Date.now()
    const nodeArgs = file.group
      ? ['--import', 'tsx', '--test-reporter=spec', join('scripts', 'test-group.mjs'), ...file.group]
      : ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-reporter=spec', file.path]
    // GNU time reports the file's own CPU (its process and every process it waited for); the
    // runner's own children counters would mix in files that ended meanwhile.
    const cpuFile = timeCommand ? join(scratch, `${results.length + running.size}-${process.hrtime.bigint()}.cpu`) : undefined
    const [command, args] = cpuFile ? [timeCommand, ['-f', '%U %S', '-o', cpuFile, process.execPath, ...nodeArgs]] : [process.execPath, nodeArgs]
    const child = spawn(command, args, {env: testEnv(file), stdio: ['ignore', 'pipe', 'pipe'], detached: true})
    running.set(child.pid, {file, child})
    const chunks = []
    child.stdout.on('data', (chunk) => chunks.push(chunk))
    child.stderr.on('data', (chunk) => chunks.push(chunk))
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      killGroup(child, 'SIGKILL')
    }, fileTimeoutMs)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      running.delete(child.pid)
      // The process group may have left helpers (bq runs a test forgot); they must not outlive the file.
      killGroup(child, 'SIGKILL')
      const output = Buffer.concat(chunks).toString('utf8')
      const counts = countsFrom(output)
      const ok = code === 0 && !timedOut
      if (!ok && counts.fail === 0) counts.fail = 1 // a file that died before reporting still failed
      resolve({
        file,
        ok,
        code,
        signal,
        timedOut,
        output,
        counts,
        wallSeconds: (Date.now() - began) / 1000,
        cpuSeconds: cpuSecondsFrom(cpuFile),
      })
    })
  })
}

function killGroup(child, signal) {
  try {
    process.kill(-child.pid, signal)
  } catch {
    // already gone
  }
}

/** The user + system seconds GNU time wrote for one file (NaN where it is not installed). */
function cpuSecondsFrom(cpuFile) {
  if (!cpuFile) return Number.NaN
  try {
    const [user, system] = readFileSync(cpuFile, 'utf8').trim().split('\n').at(-1).split(' ').map(Number)
    rmSync(cpuFile, {force: true})
    return user + system
  } catch {
    return Number.NaN
  }
}

/** The spec reporter's closing counts (`ℹ pass N`, ...). */
function countsFrom(output) {
  const counts = {pass: 0, fail: 0, skipped: 0, cancelled: 0, todo: 0}
  for (const key of Object.keys(counts)) {
    const matches = [...output.matchAll(new RegExp(`^ℹ ${key} (\\d+)$`, 'gm'))]
    if (matches.length > 0) counts[key] = Number(matches.at(-1)[1])
  }
  return counts
}

function formatSeconds(seconds) {
  return Number.isFinite(seconds) ? `${seconds.toFixed(1)} s` : '?'
}

/** The header scripts/slowest-tests.js parses: keep its shape. */
function header(result) {
  const status = result.ok ? 'ok' : result.timedOut ? `TIMED OUT after ${fileTimeoutMs / 1000} s` : 'FAILED'
  return `▶ ${result.file.path} — ${status} (${formatSeconds(result.wallSeconds)} wall, ${formatSeconds(result.cpuSeconds)} cpu)`
}

function printResult(result) {
  console.log(`\n${header(result)}`)
  process.stdout.write(result.output.endsWith('\n') || result.output === '' ? result.output : `${result.output}\n`)
}

function report() {
  const totals = {pass: 0, fail: 0, skipped: 0, cancelled: 0, todo: 0}
  for (const result of results) for (const key of Object.keys(totals)) totals[key] += result.counts[key]
  const failedFiles = results.filter((result) => !result.ok)
  const wall = (Date.now() - startedAt) / 1000
  const slowest = [...results].sort((a, b) => b.wallSeconds - a.wallSeconds).slice(0, 10)
  console.log('\nslowest files:')
  for (const result of slowest) console.log(`  ${formatSeconds(result.wallSeconds).padStart(8)}  ${formatSeconds(result.cpuSeconds).padStart(8)} cpu  ${result.file.path}`)
  if (failedFiles.length > 0) {
    console.log('\nfailed files:')
    for (const result of failedFiles) console.log(`  ${header(result)}`)
  }
  writeTimings(wall)
  console.log(`\nrun-tests: ${results.length} files in ${formatSeconds(wall)} (${options.jobs} at a time); ${totals.cancelled} cancelled, ${totals.todo} todo`)
  console.log(`tests: ${totals.pass} passed, ${totals.fail + totals.cancelled} failed, ${totals.skipped} skipped`)
  process.exitCode = failedFiles.length > 0 || interrupted || totals.fail + totals.cancelled > 0 ? 1 : 0
}

/** Each file's wall time, for the next run's ordering and for scripts/slowest-tests.js. */
function writeTimings(wall) {
  const dir = join('.bq-test')
  try {
    mkdirSync(dir, {recursive: true})
    const lines = results.map((r) => [r.file.path, r.wallSeconds.toFixed(1), r.cpuSeconds.toFixed(1), r.ok ? 'ok' : 'failed'].join('\t'))
    writeFileSync(join(dir, 'timings.tsv'), `# total ${wall.toFixed(1)} s, ${options.jobs} at a time\n${lines.join('\n')}\n`)
  } catch {
    // timings are a convenience; a read-only tree must not fail the run
  }
}
