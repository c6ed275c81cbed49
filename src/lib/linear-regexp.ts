import {createRequire} from 'node:module'

import {UsageError} from './errors.js'

/**
 * Regular expressions that bq evaluates against data a user does not control (a schema's
 * `pattern` and `patternProperties` against message data, `--select key~REGEX` against messages)
 * run on RE2JS, a pure-JavaScript port of RE2: matching takes time linear in the input, so
 * `^(a+)+$` against forty a's and a `!` answers at once instead of backtracking for hours (and
 * keeping the process deaf to Ctrl-C while it does).
 *
 * The pattern is written in JavaScript's syntax (`u` mode, as ajv compiles it): RE2JS checks the
 * syntax with the native engine, then translates it. Two classes are rewritten so that the
 * answer is the one JavaScript gives: `\s` / `\S` (JavaScript's whitespace includes U+00A0,
 * U+FEFF, U+2028 and the other Unicode spaces; RE2's is ASCII), and `.` outside `s` mode (in
 * JavaScript it excludes `\r`, U+2028 and U+2029 as well as `\n`). A backreference (`\1`,
 * `\k<name>`) or a lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`) cannot be matched in linear time:
 * such a pattern is refused with one line naming it (UnsupportedPattern), never run.
 *
 * RE2JS (about 260 KB) is loaded the first time a pattern is compiled, not at bq's start.
 */

interface Re2Pattern {
  test(input: string): boolean
}
interface Re2Module {
  RE2JS: {
    compile(source: string, flags?: number): Re2Pattern
    translateRegExp(source: string): string
    CASE_INSENSITIVE: number
    DOTALL: number
    MULTILINE: number
  }
}

let re2: Re2Module['RE2JS'] | undefined
const engine = (): Re2Module['RE2JS'] => (re2 ??= (createRequire(import.meta.url)('re2js') as Re2Module).RE2JS)

/** A pattern the linear-time engine cannot run (a backreference or a lookaround). */
export class UnsupportedPattern extends UsageError {
  readonly pattern: string
  constructor(pattern: string, reason: string) {
    super(`pattern ${JSON.stringify(pattern)} ${reason}, which bq's linear-time regex engine cannot run (no backreferences or lookaround)`, 'pattern')
    this.name = 'UnsupportedPattern'
    this.pattern = pattern
  }
}

// JavaScript's \s (ECMAScript WhiteSpace and LineTerminator), in RE2 class syntax.
const SPACE = '\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}'
const DOT = '[^\\n\\r\\x{2028}\\x{2029}]'

/** Rewrites `\s`, `\S` and (outside `s` mode) `.` in a translated RE2 source to JavaScript's meaning. */
function javascriptClasses(source: string, dotAll: boolean): string {
  let out = ''
  let inClass = false
  for (let i = 0; i < source.length; i++) {
    const char = source[i]
    if (char === '\\' && i + 1 < source.length) {
      const next = source[i + 1]
      i++
      if (next === 's') out += inClass ? SPACE : `[${SPACE}]`
      else if (next === 'S' && !inClass) out += `[^${SPACE}]`
      else out += char + next
      continue
    }
    if (inClass) {
      if (char === ']') inClass = false
      out += char
      continue
    }
    if (char === '[') {
      inClass = true
      out += char
      // A `]` or `^]` right after the opening bracket is a literal.
      if (source[i + 1] === '^') out += source[++i]
      if (source[i + 1] === ']') out += source[++i]
      continue
    }
    out += char === '.' && !dotAll ? DOT : char
  }
  return out
}

/** Why a (syntactically valid) JavaScript pattern needs backtracking; undefined when it does not. */
function backtrackingFeature(source: string): string | undefined {
  let inClass = false
  for (let i = 0; i < source.length; i++) {
    const char = source[i]
    if (char === '\\') {
      const next = source[i + 1] ?? ''
      if (!inClass && (/[1-9]/.test(next) || (next === 'k' && source[i + 2] === '<'))) return 'uses a backreference'
      i++
    } else if (inClass) {
      if (char === ']') inClass = false
    } else if (char === '[') {
      inClass = true
      if (source[i + 1] === '^') i++
    } else if (char === '(' && /^\(\?<?[=!]/.test(source.slice(i, i + 4))) {
      return 'uses a lookaround'
    }
  }
  return undefined
}

const cache = new Map<string, Re2Pattern>()

/**
 * Compiles a JavaScript-syntax pattern with flags (`u`, `i`, `m`, `s`; `g`/`y` mean nothing to a
 * yes-or-no test) to a linear-time tester. A syntax error is a SyntaxError, as `new RegExp` throws;
 * a pattern needing backtracking is an UnsupportedPattern.
 */
export function linearRegExp(source: string, flags = ''): Re2Pattern {
  const key = `${flags}/${source}`
  const cached = cache.get(key)
  if (cached !== undefined) return cached
  const RE2JS = engine()
  // The native engine checks the syntax (its message is the one users know); it never matches here.
  new RegExp(source, flags.replace(/[^imsu]/g, ''))
  const feature = backtrackingFeature(source)
  if (feature !== undefined) throw new UnsupportedPattern(source, feature)
  let compiled: Re2Pattern
  try {
    let mode = 0
    if (flags.includes('i')) mode |= RE2JS.CASE_INSENSITIVE
    if (flags.includes('m')) mode |= RE2JS.MULTILINE
    if (flags.includes('s')) mode |= RE2JS.DOTALL
    compiled = RE2JS.compile(javascriptClasses(RE2JS.translateRegExp(source), flags.includes('s')), mode)
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    throw new UnsupportedPattern(source, `is not supported (${message.split('\n')[0]})`)
  }
  if (cache.size > 10_000) cache.clear()
  cache.set(key, compiled)
  return compiled
}

/** ajv's `code.regExp` option: ajv calls it with a pattern and `"u"`, and needs an object with test(). */
export const ajvRegExp = Object.assign((source: string, flags: string) => linearRegExp(source, flags), {code: 'bq-linear-regexp'})
