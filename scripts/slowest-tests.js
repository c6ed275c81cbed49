#!/usr/bin/env node
// Prints the slowest test files of a run from scripts/run-tests.js's saved output (its
// `▶ <file> — ok (12.3 s wall, 4.5 s cpu)` headers), so two runs can be compared the same way.
//
// Usage: node scripts/slowest-tests.js LOG [--top N] [--tsv]
//   node scripts/slowest-tests.js ci.log --top 10
//   --tsv  prints `file<TAB>wall seconds<TAB>cpu seconds` for every file, longest first (the shape
//          of test/file-times.tsv)
import {readFileSync} from 'node:fs'

const args = process.argv.slice(2)
const log = args.find((arg, i) => !arg.startsWith('--') && args[i - 1] !== '--top')
const topIndex = args.indexOf('--top')
const top = topIndex >= 0 ? Number(args[topIndex + 1]) : 10
if (!log || !Number.isInteger(top) || top < 1) {
  console.error('usage: node scripts/slowest-tests.js LOG [--top N] [--tsv]')
  process.exit(2)
}

let text
try {
  text = readFileSync(log, 'utf8')
} catch (error) {
  console.error(`cannot read ${log}: ${error.code ?? error.message}`)
  process.exit(2)
}

const header = /^▶ (\S+\.test\.ts) — (.+?) \(([\d.]+) s wall, ([\d.]+|\?) s cpu\)$/gm
const files = [...text.matchAll(header)].map((m) => ({path: m[1], status: m[2], wall: Number(m[3]), cpu: Number(m[4])}))
if (files.length === 0) {
  console.error(`${log}: no file headers of scripts/run-tests.js found`)
  process.exit(1)
}
files.sort((a, b) => b.wall - a.wall)

if (args.includes('--tsv')) {
  for (const file of files) console.log(`${file.path}\t${file.wall.toFixed(1)}\t${Number.isFinite(file.cpu) ? file.cpu.toFixed(1) : ''}`)
} else {
  const total = files.reduce((sum, file) => sum + file.wall, 0)
  const closing = /^run-tests: (\d+) files in ([\d.]+) s \((\d+) at a time\)/m.exec(text)
  console.log(`${files.length} files, ${total.toFixed(0)} s of file time${closing ? `, ${Number(closing[2]).toFixed(0)} s wall at ${closing[3]} at a time` : ''}`)
  console.log('| # | file | wall s | cpu s |')
  console.log('|---|---|---:|---:|')
  files.slice(0, top).forEach((file, i) => {
    console.log(`| ${i + 1} | \`${file.path}\` | ${file.wall.toFixed(1)} | ${Number.isFinite(file.cpu) ? file.cpu.toFixed(1) : '?'} |`)
  })
}
