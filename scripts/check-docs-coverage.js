#!/usr/bin/env node
// Part of `npm run lint`: nothing the README held before it was split into docs/ may go missing.
// scripts/readme-before.json is a frozen list of the old README's headings and table rows (the
// README at the split, read with `git show`); every one of them must still appear in README.md or
// a page under docs/ (levels may change: a `###` may now be a page's `##`). Text is compared with
// whitespace collapsed and link targets dropped, so a link repointed at another page still counts.
// A heading or row dropped on purpose (a page rewritten) is deleted from readme-before.json in the
// same commit, so the removal is visible in review.
//
// Usage: node scripts/check-docs-coverage.js            (exit 1 lists each heading or row missing)
//        node scripts/check-docs-coverage.js --snapshot OLD.md   (writes readme-before.json; once)
import {readFileSync, readdirSync, statSync, writeFileSync} from 'node:fs'
import path from 'node:path'
import {fileURLToPath} from 'node:url'

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')
const snapshotFile = path.join(root, 'scripts', 'readme-before.json')

/** Whitespace collapsed, `[text](target)` read as `[text]`, trailing pipes and spaces dropped. */
function normalize(text) {
  return text
    .replace(/\]\([^)]*\)/g, ']')
    .replace(/\s+/g, ' ')
    .trim()
}

/** The headings and table rows of a markdown text (fenced code blocks left out). */
function outline(markdown) {
  const headings = []
  const rows = []
  let fence = null
  for (const line of markdown.split('\n')) {
    const opener = /^\s*(```+|~~~+)/.exec(line)
    if (opener) {
      if (fence === null) fence = opener[1]
      else if (line.trim().startsWith(fence)) fence = null
      continue
    }
    if (fence !== null) continue
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (heading) headings.push(normalize(heading[1]))
    else if (/^\s*\|.*\|\s*$/.test(line) && !/^\s*\|[\s:|-]+\|\s*$/.test(line)) rows.push(normalize(line))
  }
  return {headings, rows}
}

function markdownFiles(dir, found = []) {
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry)
    if (statSync(full).isDirectory()) markdownFiles(full, found)
    else if (entry.endsWith('.md')) found.push(full)
  }
  return found
}

if (process.argv[2] === '--snapshot') {
  const source = process.argv[3]
  const text = readFileSync(source === '-' || source === undefined ? 0 : source, 'utf8')
  const {headings, rows} = outline(text)
  writeFileSync(snapshotFile, `${JSON.stringify({note: 'Headings and table rows of README.md before it was split into docs/ (scripts/check-docs-coverage.js).', headings, rows}, null, 1)}\n`)
  console.log(`check-docs-coverage: wrote ${path.relative(root, snapshotFile)} (${headings.length} headings, ${rows.length} table rows)`)
  process.exit(0)
}

const before = JSON.parse(readFileSync(snapshotFile, 'utf8'))
const pages = [path.join(root, 'README.md'), ...markdownFiles(path.join(root, 'docs'))]
const now = {headings: new Set(), rows: new Set()}
for (const page of pages) {
  const {headings, rows} = outline(readFileSync(page, 'utf8'))
  for (const heading of headings) now.headings.add(heading)
  for (const row of rows) now.rows.add(row)
}
const missing = [
  ...before.headings.filter((heading) => !now.headings.has(heading)).map((heading) => `heading: ${heading}`),
  ...before.rows.filter((row) => !now.rows.has(row)).map((row) => `table row: ${row.length > 160 ? `${row.slice(0, 157)}…` : row}`),
]
if (missing.length > 0) {
  console.error(missing.join('\n'))
  console.error(`check-docs-coverage: ${missing.length} of the old README's ${before.headings.length} headings and ${before.rows.length} table rows are in neither README.md nor docs/`)
  process.exit(1)
}
console.log(`check-docs-coverage: all ${before.headings.length} headings and ${before.rows.length} table rows of the old README are in README.md or docs/ (${pages.length} pages)`)
