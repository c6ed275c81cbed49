#!/usr/bin/env node
// Part of `npm run lint`: every `*.ts` / `*.js` file that a comment in the code, or a markdown
// document of the project, names must exist in the tree, so a rename cannot leave readers pointed
// at nothing. Comments are found with TypeScript's own parser (strings and code are not comments).
//
// A comment that names a page under docs/ must name one that exists.
//
// Markdown pages (README.md, docs/, and every other *.md of the tree) are held to more:
// - a path into the project's folders (`src/…`, `test/…`, `scripts/…`, `bench/…`, `examples/…`,
//   `docs/…`, `.ci/…`), of any extension, must exist (placeholders such as `<broker>`, globs,
//   and generated folders such as `bench/tmp/` are not checked);
// - a relative link's target must exist, and so must its `#anchor` when it points at a page;
// - every `bq <command>` in code must be a command, alias or topic of the commands index
//   (src/commands/index.ts and each command's `aliases`): a code span that starts with `bq`, and
//   in a code block a line that runs bq (`bq …`, `$ bq …`, `VAR=x bq …`, `run: bq …`, or bq after
//   `|`, `;`, `&&`, `||`, `(`). A block with `$ ` prompts (help output) is read on its prompt
//   lines only.
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

// Markdown: folders of the project whose paths a page may name.
const projectPath = /(?<![\w./~$-])((?:src|test|scripts|bench|examples|docs|\.ci)\/[^\s`'"()[\],;:|]*)/g
// `bq` words that are wrong on purpose: a page's example of a mistyped command.
const deliberatelyUnknown = new Set(['peak'])

/** bq's commands, aliases and topics, as typed (`dlq redrive`), from the commands index. */
function commandNames() {
  const indexFile = path.join(root, 'src', 'commands', 'index.ts')
  if (!existsSync(indexFile)) return null
  const ids = [...readFileSync(indexFile, 'utf8').matchAll(/^\s*'?([\w:-]+)'?: (?:lazyCommand|pluginCommand)\(/gm)].map((m) => m[1])
  for (const file of relative.filter((name) => name.startsWith('src/commands/') && name.endsWith('.ts'))) {
    const aliases = /static override aliases = \[([^\]]*)\]/.exec(readFileSync(path.join(root, file), 'utf8'))
    if (aliases) ids.push(...[...aliases[1].matchAll(/'([^']+)'/g)].map((m) => m[1]))
  }
  const commands = new Set(ids.map((id) => id.replaceAll(':', ' ')))
  const topics = new Set(ids.filter((id) => id.includes(':')).map((id) => id.split(':')[0]))
  return {commands, topics}
}
const known = commandNames()

/** GitHub's anchor for a heading text. */
function slug(heading) {
  return heading
    .replace(/\]\([^)]*\)/g, ']')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/ /g, '-')
}

const anchorCache = new Map()
/** The anchors of a markdown page's headings (outside code blocks), duplicates numbered as GitHub does. */
function anchorsOf(file) {
  if (anchorCache.has(file)) return anchorCache.get(file)
  const anchors = new Set()
  let fence = false
  for (const line of readFileSync(path.join(root, file), 'utf8').split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fence = !fence
    const heading = !fence && /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)
    if (!heading) continue
    const base = slug(heading[1])
    let anchor = base
    for (let n = 1; anchors.has(anchor); n++) anchor = `${base}-${n}`
    anchors.add(anchor)
  }
  anchorCache.set(file, anchors)
  return anchors
}

/**
 * Where a markdown page runs bq: code spans that start with `bq`, and code block lines where bq is
 * in a command's place; each as {start, text} with `text` starting at `bq`.
 */
function bqInvocations(text) {
  const found = []
  const commandPlace = /(?:^\s*(?:\$\s+)?(?:-\s+run:\s+)?(?:[A-Za-z_]\w*=(?:"[^"]*"|'[^']*'|\S*)\s+)*|[|;&(]\s*)(bq[ \t].*)/g
  const lines = text.split('\n')
  let offset = 0
  let block = null
  const prose = []
  for (const line of lines) {
    if (/^\s*(```|~~~)/.test(line)) {
      if (block === null) block = []
      else {
        const prompted = block.some((entry) => /^\s*\$\s/.test(entry.line))
        for (const entry of block) {
          if (prompted && !/^\s*\$\s/.test(entry.line)) continue
          const code = entry.line.replace(/(^|\s)#.*$/, '')
          for (const match of code.matchAll(commandPlace)) found.push({start: entry.start + match.index + match[0].length - match[1].length, text: match[1]})
        }
        block = null
      }
    } else if (block !== null) block.push({start: offset, line})
    else prose.push({start: offset, line})
    offset += line.length + 1
  }
  // Code spans may run over a line end, so they are found in the prose as a whole.
  let joined = ''
  const starts = []
  for (const {start, line} of prose) {
    starts.push([joined.length, start])
    joined += `${line}\n`
  }
  const original = (index) => {
    let base = starts[0]
    for (const entry of starts) if (entry[0] <= index) base = entry
    return base[1] + index - base[0]
  }
  for (const span of joined.matchAll(/(`+)([^`]+?)\1/g)) {
    const code = span[2]
    for (const match of code.matchAll(/(?:^\s*|[|;&(]\s*)(bq[ \t\n].*)/g)) {
      found.push({start: original(span.index + span[1].length + match.index + match[0].length - match[1].length), text: match[1]})
    }
  }
  return found
}

/** What is wrong with the command after `bq` (its next two words), or null. */
function commandProblem(first, second) {
  const word = (text) => (text ?? '').replace(/[)`'",;.]+$/, '')
  const isWord = (text) => /^[a-z_][\w-]*$/.test(text)
  const a = word(first)
  const b = word(second)
  if (!isWord(a) || deliberatelyUnknown.has(a) || known.commands.has(a)) return null
  if (known.topics.has(a)) {
    if (!isWord(b) || known.commands.has(`${a} ${b}`)) return null
    return `bq ${a} ${b}, which is not a command`
  }
  return `bq ${a}, which is not a command`
}

/** Paths into the project's folders, in `body` (found at `start` of the file's `text`), that are not in the tree. */
function projectPathProblems(file, body, start, text) {
  const problems = []
  for (const match of body.matchAll(projectPath)) {
    const name = match[1].replace(/[.…]+$/, '')
    if (/[<>*{}…$]/.test(name) || name.split('/').some((segment) => skipDirs.has(segment))) continue
    if (existsSync(path.join(root, name))) continue
    problems.push(`${file}:${text.slice(0, start + match.index).split('\n').length}: names ${name}, which is not in the tree`)
  }
  return problems
}

/** Problems of a markdown page beyond file names: project paths, links, anchors, bq commands. */
function markdownProblems(file, text) {
  const problems = []
  const lineOf = (index) => text.slice(0, index).split('\n').length
  const withoutUrls = text.replace(/https?:\/\/\S+/g, (url) => ' '.repeat(url.length))
  problems.push(...projectPathProblems(file, withoutUrls, 0, text))
  for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const target = match[1]
    if (/^[a-z][\w+.-]*:/i.test(target)) continue
    const [where, anchor] = target.split('#')
    const page = where === '' ? file : path.posix.normalize(path.posix.join(path.posix.dirname(file), where))
    if (!existsSync(path.join(root, page))) {
      problems.push(`${file}:${lineOf(match.index)}: links to ${target}, which is not in the tree`)
    } else if (anchor !== undefined && page.endsWith('.md') && !anchorsOf(page).has(anchor)) {
      problems.push(`${file}:${lineOf(match.index)}: links to ${target}, a heading ${page} does not have`)
    }
  }
  if (known) {
    for (const invocation of bqInvocations(text)) {
      const [, first, second] = invocation.text.split(/\s+/)
      const problem = commandProblem(first, second)
      if (problem) problems.push(`${file}:${lineOf(invocation.start)}: names ${problem}`)
    }
  }
  return problems
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
    // In code, a path into docs/ (a comment or help text pointing at a page) must exist too.
    if (isCode) stale.push(...projectPathProblems(file, body, piece.start, text).filter((problem) => problem.includes(': names docs/')))
  }
  if (!isCode) stale.push(...markdownProblems(file, text))
})

stale.splice(0, stale.length, ...new Set(stale))
if (stale.length > 0) {
  console.error(stale.join('\n'))
  console.error(`check-file-names: ${stale.length} stale file name(s) in comments or docs`)
  process.exit(1)
}
console.log(`check-file-names: every file named in ${relative.length} files' comments and docs exists`)
