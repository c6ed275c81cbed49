#!/usr/bin/env node
// Part of `npm run lint`: every `*.ts` / `*.js` file that a comment in the code, or a markdown
// document of the project, names must exist in the tree, so a rename cannot leave readers pointed
// at nothing. Comments are found with TypeScript's own scanner (strings and code are not comments).
//
// A name resolves when it is (in order) relative to the naming file, relative to the repository
// root, relative to src/, src/lib/ or src/lib/brokers/, a dependency's file under node_modules/, or,
// for a bare file name, the name of some file in the tree. Glob patterns (`*.test.ts`) are not names. Names inside a URL, and the generated `dist/` tree, are not checked.
// Usage: node scripts/check-file-names.js [root]   (exit 1 lists each stale name as file:line)
import {existsSync, readFileSync, readdirSync, statSync} from 'node:fs'
import path from 'node:path'
import ts from 'typescript'

const root = path.resolve(process.argv[2] ?? '.')
const skipDirs = new Set(['node_modules', 'dist', 'dist.tmp', '.git', '.bq-test', 'tmp', 'notes'])
const codeExtensions = ['.ts', '.js', '.mjs', '.cjs']
// A file name ending in .ts/.js, optionally with a folder path before it.
const namePattern = /(?<![\w.@/*-])((?:\.{1,2}\/)?(?:[\w@-]+\/)*[\w.-]+\.(?:ts|js|mjs|cjs))(?![\w/])/g
// Names of other projects' files that a comment may cite on purpose (none today; keep it short).
const external = new Set([])

function walk(dir, found = []) {
  for (const entry of readdirSync(dir)) {
    if (skipDirs.has(entry)) continue
    const full = path.join(dir, entry)
    if (statSync(full).isDirectory()) walk(full, found)
    else found.push(full)
  }
  return found
}

const files = walk(root)
const relative = files.map((file) => path.relative(root, file).split(path.sep).join('/'))
const basenames = new Set(relative.map((file) => path.posix.basename(file)))
const tree = new Set(relative)

/** True when the name points at a file of the tree (see the header for the rules). */
function resolves(name, namingFile) {
  if (external.has(name)) return true
  const candidates = [
    path.posix.join(path.posix.dirname(namingFile), name),
    name,
    `src/${name}`,
    `src/lib/${name}`,
    `src/lib/brokers/${name}`,
    `node_modules/${name}`,
  ].map((candidate) => path.posix.normalize(candidate))
  // An import written with a .js extension names the .ts source beside it.
  const withSource = candidates.flatMap((candidate) => [candidate, candidate.replace(/\.js$/, '.ts')])
  if (withSource.some((candidate) => tree.has(candidate) || existsSync(path.join(root, candidate)))) return true
  if (!name.includes('/')) return basenames.has(name) || basenames.has(name.replace(/\.js$/, '.ts'))
  return false
}

/**
 * The comments of a source file, each with the line it starts on. The file is parsed, not just
 * scanned: a bare scanner cannot tell a template literal's `}` from a block's, loses its place
 * after the first `${…}`, and from there reads code as comments and comments as code. A comment
 * sits in the trivia between two tokens; reading the trivia at every node's start and end (which
 * getLeadingCommentRanges follows up to the next token) finds each one.
 */
function commentsOf(text, file) {
  const kind = file.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, kind)
  const seen = new Map()
  const collect = (position) => {
    for (const range of ts.getLeadingCommentRanges(text, position) ?? []) {
      if (!seen.has(range.pos)) seen.set(range.pos, {start: range.pos, text: text.slice(range.pos, range.end)})
    }
  }
  const visit = (node) => {
    collect(node.pos)
    collect(node.end)
    ts.forEachChild(node, visit)
  }
  collect(0)
  ts.forEachChild(source, visit)
  return [...seen.values()]
}

/** Markdown: the whole text, minus URLs (a link's target may name another project's file). */
function markdownOf(text) {
  return [{start: 0, text: text.replace(/https?:\/\/\S+/g, (url) => ' '.repeat(url.length))}]
}

const stale = []
relative.forEach((file, index) => {
  const extension = path.posix.extname(file)
  const isCode = codeExtensions.includes(extension)
  if (!isCode && extension !== '.md') return
  const text = readFileSync(files[index], 'utf8')
  const pieces = isCode ? commentsOf(text, file) : markdownOf(text)
  for (const piece of pieces) {
    const body = piece.text.replace(/https?:\/\/\S+/g, (url) => ' '.repeat(url.length))
    for (const match of body.matchAll(namePattern)) {
      const name = match[1]
      if (resolves(name, file)) continue
      const line = text.slice(0, piece.start + match.index).split('\n').length
      stale.push(`${file}:${line}: names ${name}, which is not in the tree`)
    }
  }
})

if (stale.length > 0) {
  console.error(stale.join('\n'))
  console.error(`check-file-names: ${stale.length} stale file name(s) in comments or docs`)
  process.exit(1)
}
console.log(`check-file-names: every file named in ${relative.length} files' comments and docs exists`)
