/**
 * `dlq edit`: an envelope's `data` shown for editing, and the edited text put back. The edit is
 * spliced into the original text by value (json-value.ts): members and items the operator did not
 * change keep their exact bytes in the message, whatever the editor did to the layout.
 */
import {Envelope, decodeEnvelope} from './envelope.js'
import {parseJsonTree, sourceOf} from './json-tree.js'
import type {JsonNode} from './json-tree.js'
import {spliceJson, toJsonValue} from './json-value.js'

/** `data` pretty-printed (two spaces), every number and string spelled as in the message. */
export function prettyData(envelope: Envelope): string | undefined {
  const data = envelope.node('data')
  return data === undefined ? undefined : pretty(envelope.text, data, '') + '\n'
}

function pretty(text: string, node: JsonNode, indent: string): string {
  const inner = indent + '  '
  if (node.kind === 'object') {
    if (node.members.length === 0) return '{}'
    return `{\n${node.members.map((m) => `${inner}${JSON.stringify(m.key)}: ${pretty(text, m.value, inner)}`).join(',\n')}\n${indent}}`
  }
  if (node.kind === 'array') {
    if (node.items.length === 0) return '[]'
    return `[\n${node.items.map((item) => inner + pretty(text, item, inner)).join(',\n')}\n${indent}]`
  }
  return sourceOf(text, node)
}

/**
 * The envelope with `data` replaced by the edited text (which must be valid JSON: parseJsonTree
 * throws JsonSyntaxError with the offset otherwise). Everything outside `data` is untouched.
 */
export function withEditedData(envelope: Envelope, editedText: string): Envelope {
  const data = envelope.node('data')
  if (data === undefined) throw new Error('the envelope has no data member')
  const edited = toJsonValue(editedText, parseJsonTree(editedText)).value
  const text = envelope.text
  return decodeEnvelope(text.slice(0, data.start) + spliceJson(text, data, edited) + text.slice(data.end))
}
