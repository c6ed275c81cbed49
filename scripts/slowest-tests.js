#!/usr/bin/env node
// The slowest test files of a run, read back from what scripts/run-tests.js leaves: the saved log
// of a run (its `▶ <file> — <status> (<wall> s wall, <cpu> s cpu)` headers), or, with no log
// named, the .bq-test/timings.tsv it writes at the end of each run.
//
// Usage: node scripts/slowest-tests.js [LOG] [--top N]   (default: .bq-test/timings.tsv, top 20)
import {readFileSync} from 'node:fs'

const args = process.argv.slice(2)
const topAt = args.indexOf('--top')
const top = topAt >= 0 ? Number(args.splice(topAt, 2)[1]) : 20
const log = args[0]

/** [{file, wall, cpu, status}] from a run's log or from timings.tsv. */
function readRows() {
  if (log !== undefined) {
    const header = /^▶ (\S+) — (.+) \((\S+) s wall, (\S+) s cpu\)$/
    return readFileSync(log, 'utf8')
      .split('\n')
      .map((line) => header.exec(line.trim()))
      .filter(Boolean)
      .map(([, file, status, wall, cpu]) => ({file, wall: Number(wall), cpu: Number(cpu), status}))
  }
  return readFileSync('.bq-test/timings.tsv', 'utf8')
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [file, wall, cpu, status] = line.split('\t')
      return {file, wall: Number(wall), cpu: Number(cpu), status}
    })
}

let rows
try {
  rows = readRows()
} catch (error) {
  console.error(`slowest-tests: ${error.message} (run the tests first, or name a saved log)`)
  process.exit(2)
}
rows.sort((a, b) => b.wall - a.wall)
const total = rows.reduce((sum, row) => sum + row.wall, 0)
for (const row of rows.slice(0, top)) {
  console.log(`${row.wall.toFixed(1).padStart(8)} s  ${row.cpu.toFixed(1).padStart(8)} s cpu  ${row.status === 'ok' ? '' : `${row.status}  `}${row.file}`)
}
console.log(`${rows.length} files, ${total.toFixed(1)} s of file wall time in all`)
