import {JsonSyntaxError, lineColumn, parseJsonTree} from '../envelope/json-tree.js'
import type {JsonNode} from '../envelope/json-tree.js'

/**
 * The line of a JSON pointer in a schema file, for CI annotations (`::error file=…,line=…`):
 * the line of the deepest key of the pointer that the file has (a removed keyword points at its
 * parent). Undefined when the text is not JSON.
 */
export class SchemaLines {
  private root: JsonNode | undefined
  private parsed = false

  /** `base`: where the schema sits in the file (an inline schema of registry.json: `/schemas/3/schema`). */
  constructor(private readonly text: string, private readonly base = '') {}

  lineOf(schemaPointer: string): number | undefined {
    const pointer = this.base + schemaPointer
    if (!this.parsed) {
      this.parsed = true
      try {
        this.root = parseJsonTree(this.text.charCodeAt(0) === 0xfeff ? this.text.slice(1) : this.text)
      } catch (error) {
        if (!(error instanceof JsonSyntaxError)) throw error
      }
    }
    if (this.root === undefined) return undefined
    const offset = this.text.charCodeAt(0) === 0xfeff ? 1 : 0
    let node: JsonNode = this.root
    let at = node.start
    for (const raw of pointer.split('/').slice(1)) {
      const key = raw.replace(/~1/g, '/').replace(/~0/g, '~')
      if (node.kind === 'object') {
        const member = [...node.members].reverse().find((m) => m.key === key)
        if (member === undefined) break
        at = member.keyStart
        node = member.value
      } else if (node.kind === 'array' && /^\d+$/.test(key) && Number(key) < node.items.length) {
        node = node.items[Number(key)]
        at = node.start
      } else {
        break
      }
    }
    return lineColumn(this.text, at + offset).line
  }
}

/** The line of a JSON.parse error ("… at position 42 …"), when the message gives a position. */
export function parseErrorLine(text: string, message: string): number | undefined {
  const match = /position (\d+)/.exec(message)
  return match ? lineColumn(text, Number(match[1])).line : undefined
}
