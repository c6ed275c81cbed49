/**
 * The top-level members of a JSON object text, with their spans, and nothing below them: what
 * the codec needs to splice an envelope (drop `dead_letter`, set `attempts`) without building
 * the lossless tree of every nested value. The text must already be known to be a valid JSON
 * object (JSON.parse accepted it, or the codec wrote it), so the scan checks nothing.
 */
import type {Span} from './json-tree.js'

export interface TopLevelMember {
  /** The decoded key. */
  key: string
  /** Where the key's opening quote is. */
  keyStart: number
  value: Span
}

/** The object's own span and its members in source order, duplicates included. */
export interface TopLevelObject extends Span {
  members: TopLevelMember[]
}

const QUOTE = 34
const BACKSLASH = 92
const COMMA = 44
const COLON = 58
const CLOSE_BRACE = 125

export function scanTopLevel(text: string): TopLevelObject {
  const start = skipWhitespace(text, 0)
  const members: TopLevelMember[] = []
  let at = start + 1
  while (true) {
    at = skipWhitespace(text, at)
    const c = text.charCodeAt(at)
    if (c === CLOSE_BRACE) return {start, end: at + 1, members}
    if (c === COMMA) {
      at++
      continue
    }
    const keyStart = at
    const keyEnd = endOfString(text, keyStart)
    const rawKey = text.slice(keyStart + 1, keyEnd - 1)
    const key = rawKey.includes('\\') ? (JSON.parse(text.slice(keyStart, keyEnd)) as string) : rawKey
    at = skipWhitespace(text, keyEnd)
    if (text.charCodeAt(at) === COLON) at = skipWhitespace(text, at + 1)
    const valueEnd = endOfValue(text, at)
    members.push({key, keyStart, value: {start: at, end: valueEnd}})
    at = valueEnd
  }
}

function skipWhitespace(text: string, at: number): number {
  let c = text.charCodeAt(at)
  while (c === 32 || c === 10 || c === 13 || c === 9) c = text.charCodeAt(++at)
  return at
}

/** Just past the closing quote of the string that opens at `at`. */
function endOfString(text: string, at: number): number {
  let from = at + 1
  while (true) {
    const quote = text.indexOf('"', from)
    let backslashes = 0
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++
    if (backslashes % 2 === 0) return quote + 1
    from = quote + 1
  }
}

/** Just past the value that starts at `at`. */
function endOfValue(text: string, at: number): number {
  const c = text.charCodeAt(at)
  if (c === QUOTE) return endOfString(text, at)
  if (c === 123 || c === 91) {
    let depth = 1
    let end = at + 1
    while (true) {
      const ch = text.charCodeAt(end)
      if (ch === QUOTE) {
        end = endOfString(text, end)
        continue
      }
      if (ch === 123 || ch === 91) depth++
      else if ((ch === 125 || ch === 93) && --depth === 0) return end + 1
      end++
    }
  }
  // A number or a literal: up to the next separator or whitespace.
  let end = at + 1
  let d = text.charCodeAt(end)
  while (end < text.length && d !== COMMA && d !== CLOSE_BRACE && d !== 93 && d !== 32 && d !== 10 && d !== 13 && d !== 9) d = text.charCodeAt(++end)
  return end
}
