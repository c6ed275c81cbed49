/**
 * A lossless JSON reader. It builds a tree whose nodes remember where they sit in the source
 * text, so the codec can re-emit any value byte for byte (number spellings, string escapes,
 * key order, duplicate keys) and edit an envelope by splicing the original text.
 *
 * The parser is iterative (an explicit stack), so nesting depth is bounded by memory, not by
 * the call stack: a 100,000-level document parses instead of crashing.
 */

export interface Span {
  /** Offset of the first character (UTF-16 index into the source string). */
  start: number
  /** Offset just past the last character. */
  end: number
}

export interface ObjectNode extends Span {
  kind: 'object'
  members: Member[]
}
export interface ArrayNode extends Span {
  kind: 'array'
  items: JsonNode[]
}
export interface StringNode extends Span {
  kind: 'string'
  /** The decoded string value. */
  value: string
}
export interface NumberNode extends Span {
  kind: 'number'
}
export interface LiteralNode extends Span {
  kind: 'true' | 'false' | 'null'
}
export type JsonNode = ObjectNode | ArrayNode | StringNode | NumberNode | LiteralNode

export interface Member {
  key: string
  /** Where the key's opening quote is. */
  keyStart: number
  value: JsonNode
}

export class JsonSyntaxError extends Error {
  readonly offset: number
  constructor(message: string, offset: number) {
    super(message)
    this.name = 'JsonSyntaxError'
    this.offset = offset
  }
}

/** Line and column (1-based) of an offset, for messages. */
export function lineColumn(text: string, offset: number): {line: number; column: number} {
  let line = 1
  let lineStart = 0
  for (let i = 0; i < offset && i < text.length; i++) {
    if (text.charCodeAt(i) === 10) {
      line++
      lineStart = i + 1
    }
  }
  return {line, column: offset - lineStart + 1}
}

const enum Ch {
  Tab = 9,
  Lf = 10,
  Cr = 13,
  Space = 32,
  Quote = 34,
  Plus = 43,
  Comma = 44,
  Minus = 45,
  Dot = 46,
  Zero = 48,
  Nine = 57,
  Colon = 58,
  UpperE = 69,
  LBracket = 91,
  Backslash = 92,
  RBracket = 93,
  LowerE = 101,
  LBrace = 123,
  RBrace = 125,
}

type ObjectFrame = {node: ObjectNode; pendingKey: string; pendingKeyStart: number}
type Frame = ObjectFrame | {node: ArrayNode}

/** Parses one complete JSON text. Throws JsonSyntaxError with the offset of the problem. */
export function parseJsonTree(text: string): JsonNode {
  return new Reader(text).parse()
}

/** One parse: the text, the position and the stack of open containers (no recursion, no closures). */
class Reader {
  private pos = 0
  private readonly length: number
  private readonly stack: Frame[] = []
  private root: JsonNode | undefined

  constructor(private readonly text: string) {
    this.length = text.length
  }

  parse(): JsonNode {
    const text = this.text
    const length = this.length
    const stack = this.stack
    // State machine: 'value' expects a value; 'after' expects ',' or a closer (or end).
    let expectValue = true
    this.skipWhitespace()
    if (this.pos >= length) this.fail('empty input')

    while (true) {
      this.skipWhitespace()
      if (expectValue) {
        const c = text.charCodeAt(this.pos)
        if (c === Ch.LBrace) {
          const node: ObjectNode = {kind: 'object', start: this.pos, end: -1, members: []}
          this.pos++
          this.skipWhitespace()
          if (text.charCodeAt(this.pos) === Ch.RBrace) {
            this.pos++
            node.end = this.pos
            this.attach(node)
            expectValue = false
          } else {
            const frame: ObjectFrame = {node, pendingKey: '', pendingKeyStart: 0}
            stack.push(frame)
            this.readKey(frame)
          }
          continue
        }
        if (c === Ch.LBracket) {
          const node: ArrayNode = {kind: 'array', start: this.pos, end: -1, items: []}
          this.pos++
          this.skipWhitespace()
          if (text.charCodeAt(this.pos) === Ch.RBracket) {
            this.pos++
            node.end = this.pos
            this.attach(node)
            expectValue = false
          } else {
            stack.push({node})
          }
          continue
        }
        let node: JsonNode
        if (c === Ch.Quote) {
          const start = this.pos
          const value = this.readString()
          node = {kind: 'string', start, end: this.pos, value}
        } else if (c === Ch.Minus || isDigit(c)) node = this.readNumber()
        else if (c === 116) node = this.readLiteral('true')
        else if (c === 102) node = this.readLiteral('false')
        else if (c === 110) node = this.readLiteral('null')
        else node = this.fail(this.pos >= length ? 'unexpected end of input: a value was expected' : `unexpected ${this.describe(this.pos)}: a value was expected`)
        this.attach(node)
        expectValue = false
        continue
      }

      const top = stack[stack.length - 1]
      if (top === undefined) {
        if (this.pos < length) this.fail(`unexpected ${this.describe(this.pos)} after the end of the JSON value`)
        return this.root as JsonNode
      }
      const c = text.charCodeAt(this.pos)
      if (c === Ch.Comma) {
        this.pos++
        this.skipWhitespace()
        if (top.node.kind === 'object') this.readKey(top as ObjectFrame)
        expectValue = true
        continue
      }
      const closer = top.node.kind === 'object' ? Ch.RBrace : Ch.RBracket
      if (c === closer) {
        this.pos++
        top.node.end = this.pos
        stack.pop()
        this.attach(top.node)
        continue
      }
      this.fail(this.pos >= length ? 'unexpected end of input (truncated JSON?)' : `unexpected ${this.describe(this.pos)}: expected ',' or '${top.node.kind === 'object' ? '}' : ']'}'`)
    }
  }

  private fail(message: string, at = this.pos): never {
    throw new JsonSyntaxError(message, at)
  }

  private skipWhitespace(): void {
    const text = this.text
    let pos = this.pos
    while (pos < this.length) {
      const c = text.charCodeAt(pos)
      if (c === Ch.Space || c === Ch.Lf || c === Ch.Cr || c === Ch.Tab) pos++
      else break
    }
    this.pos = pos
  }

  private describe(at: number): string {
    return at >= this.length ? 'end of input' : `'${this.text[at]}'`
  }

  /** Reads the string token at pos (its opening quote) and returns its decoded value. */
  private readString(): string {
    const text = this.text
    const length = this.length
    const start = this.pos
    let pos = start + 1 // past the opening quote
    let value = ''
    let chunkStart = pos
    while (true) {
      if (pos >= length) this.fail('unterminated string', start)
      const c = text.charCodeAt(pos)
      if (c === Ch.Quote) {
        value += text.slice(chunkStart, pos)
        this.pos = pos + 1
        return value
      }
      if (c === Ch.Backslash) {
        value += text.slice(chunkStart, pos)
        const e = text.charCodeAt(pos + 1)
        switch (e) {
          case 34: value += '"'; break
          case 92: value += '\\'; break
          case 47: value += '/'; break
          case 98: value += '\b'; break
          case 102: value += '\f'; break
          case 110: value += '\n'; break
          case 114: value += '\r'; break
          case 116: value += '\t'; break
          case 117: {
            const hex = text.slice(pos + 2, pos + 6)
            if (!/^[0-9a-fA-F]{4}$/.test(hex)) this.fail('invalid \\u escape in string', pos)
            value += String.fromCharCode(parseInt(hex, 16))
            pos += 4
            break
          }
          default:
            this.fail('invalid escape in string', pos)
        }
        pos += 2
        chunkStart = pos
        continue
      }
      if (c < 0x20) this.fail('unescaped control character in string', pos)
      pos++
    }
  }

  private readNumber(): NumberNode {
    const text = this.text
    const length = this.length
    const start = this.pos
    let pos = start
    if (text.charCodeAt(pos) === Ch.Minus) pos++
    const first = text.charCodeAt(pos)
    if (first === Ch.Zero) {
      pos++
    } else if (first > Ch.Zero && first <= Ch.Nine) {
      while (pos < length && isDigit(text.charCodeAt(pos))) pos++
    } else {
      this.fail('invalid number', start)
    }
    if (text.charCodeAt(pos) === Ch.Dot) {
      pos++
      if (!isDigit(text.charCodeAt(pos))) this.fail('invalid number: digits expected after the decimal point', start)
      while (pos < length && isDigit(text.charCodeAt(pos))) pos++
    }
    const e = text.charCodeAt(pos)
    if (e === Ch.LowerE || e === Ch.UpperE) {
      pos++
      const sign = text.charCodeAt(pos)
      if (sign === Ch.Plus || sign === Ch.Minus) pos++
      if (!isDigit(text.charCodeAt(pos))) this.fail('invalid number: digits expected in the exponent', start)
      while (pos < length && isDigit(text.charCodeAt(pos))) pos++
    }
    this.pos = pos
    return {kind: 'number', start, end: pos}
  }

  private readLiteral(word: 'true' | 'false' | 'null'): LiteralNode {
    if (this.text.startsWith(word, this.pos)) {
      const start = this.pos
      this.pos += word.length
      return {kind: word, start, end: this.pos}
    }
    return this.fail(`unexpected ${this.describe(this.pos)}`)
  }

  /** Attaches a finished value to the enclosing container, or makes it the root. */
  private attach(node: JsonNode): void {
    const top = this.stack[this.stack.length - 1]
    if (top === undefined) this.root = node
    else if (top.node.kind === 'array') top.node.items.push(node)
    else {
      const frame = top as ObjectFrame
      frame.node.members.push({key: frame.pendingKey, keyStart: frame.pendingKeyStart, value: node})
    }
  }

  private readKey(frame: ObjectFrame): void {
    this.skipWhitespace()
    const text = this.text
    if (text.charCodeAt(this.pos) !== Ch.Quote) {
      this.fail(this.pos >= this.length ? 'unexpected end of input (truncated JSON?)' : `unexpected ${this.describe(this.pos)}: an object key in double quotes was expected`)
    }
    frame.pendingKeyStart = this.pos
    frame.pendingKey = this.readString()
    this.skipWhitespace()
    if (text.charCodeAt(this.pos) !== Ch.Colon) this.fail(`unexpected ${this.describe(this.pos)}: ':' was expected after an object key`)
    this.pos++
  }
}

function isDigit(c: number): boolean {
  return c >= Ch.Zero && c <= Ch.Nine
}

/** The last member with this key (JSON parsers conventionally let the last duplicate win). */
export function memberOf(node: ObjectNode, key: string): Member | undefined {
  for (let i = node.members.length - 1; i >= 0; i--) {
    if (node.members[i].key === key) return node.members[i]
  }
  return undefined
}

/** The source text of a node, exactly as written. */
export function sourceOf(text: string, node: Span): string {
  return text.slice(node.start, node.end)
}

/**
 * Writes a JSON text compactly (insignificant whitespace removed) while keeping every token
 * exactly as spelled: number literals, string escapes, key order and duplicates survive.
 */
export function compactJson(text: string, node: JsonNode): string {
  if (node.kind !== 'object' && node.kind !== 'array') return sourceOf(text, node)
  let out = ''
  // Iterative walk: each entry either emits a literal string or visits a node.
  const work: Array<string | JsonNode> = [node]
  while (work.length > 0) {
    const item = work.pop() as string | JsonNode
    if (typeof item === 'string') {
      out += item
      continue
    }
    if (item.kind === 'object') {
      const parts: Array<string | JsonNode> = ['{']
      item.members.forEach((member, i) => {
        if (i > 0) parts.push(',')
        parts.push(sourceOf(text, {start: member.keyStart, end: keyEnd(text, member.keyStart)}) + ':')
        parts.push(member.value)
      })
      parts.push('}')
      for (let i = parts.length - 1; i >= 0; i--) work.push(parts[i])
    } else if (item.kind === 'array') {
      const parts: Array<string | JsonNode> = ['[']
      item.items.forEach((child, i) => {
        if (i > 0) parts.push(',')
        parts.push(child)
      })
      parts.push(']')
      for (let i = parts.length - 1; i >= 0; i--) work.push(parts[i])
    } else {
      out += sourceOf(text, item)
    }
  }
  return out
}

/** Where a string token that starts at `start` ends (just past its closing quote). */
function keyEnd(text: string, start: number): number {
  let pos = start + 1
  while (pos < text.length) {
    const c = text.charCodeAt(pos)
    if (c === Ch.Backslash) pos += 2
    else if (c === Ch.Quote) return pos + 1
    else pos++
  }
  return pos
}
