import type {Envelope} from '../envelope/envelope.js'
import type {JsonNode, Span} from '../envelope/json-tree.js'
import type {SchemaRegistry} from '../schema/registry.js'
import {sensitiveFieldName} from '../schema/sensitive.js'

/**
 * PII masking for what bq shows and exports (peek --json, --jsonl, --follow): each `data` field
 * the URN's registry schema marks `x-gdpr-sensitive` is replaced by the string
 * `"[masked:<category>]"`, spliced into the envelope's text so every other byte stays as stored.
 * Masking is display-only: redrive and replay never call it, and a masked export line carries
 * `"masked":[…]` so that `bq replay` refuses it (export-line.ts).
 */

export interface MaskedEnvelope {
  /** The envelope text with the sensitive values replaced. */
  text: string
  /** The schema paths that were masked, as `data.email`, `data.addresses[*].line`. */
  fields: string[]
}

export class Masker {
  constructor(private readonly registry: SchemaRegistry) {}

  /** The envelope with its sensitive fields masked; undefined when it has none to mask. */
  mask(envelope: Envelope, as: {urn?: string; bare?: boolean} = {}): MaskedEnvelope | undefined {
    // `bare`: the whole document is the data (bq schema gdpr --mask --urn on data without an envelope).
    const urn = as.urn ?? envelope.urn
    const data = as.bare ? envelope.root : envelope.node('data')
    if (urn === undefined || data === undefined) return undefined
    const paths = this.registry.sensitivePaths(urn)
    if (paths.length === 0) return undefined
    const edits: Array<Span & {replacement: string}> = []
    const fields: string[] = []
    for (const sensitive of paths) {
      const nodes = nodesAt(data, sensitive.path)
      if (nodes.length === 0) continue
      fields.push(sensitiveFieldName(sensitive))
      for (const node of nodes) edits.push({start: node.start, end: node.end, replacement: JSON.stringify(`[masked:${sensitive.category}]`)})
    }
    if (edits.length === 0) return undefined
    return {text: splice(envelope.text, edits), fields}
  }
}

/** Every node a path reaches (`*` = each array item; a duplicated key = each of its values). */
function nodesAt(root: JsonNode, path: string[]): JsonNode[] {
  let current: JsonNode[] = [root]
  for (const segment of path) {
    const next: JsonNode[] = []
    for (const node of current) {
      if (segment === '*' && node.kind === 'array') next.push(...node.items)
      else if (node.kind === 'object') for (const member of node.members) if (member.key === segment) next.push(member.value)
    }
    current = next
  }
  return current
}

/** Applies non-overlapping replacements (a span inside another masked span is dropped). */
function splice(text: string, edits: Array<Span & {replacement: string}>): string {
  edits.sort((a, b) => a.start - b.start || b.end - a.end)
  let out = ''
  let at = 0
  for (const edit of edits) {
    if (edit.start < at) continue
    out += text.slice(at, edit.start) + edit.replacement
    at = edit.end
  }
  return out + text.slice(at)
}
