import {sourceOf} from '../envelope/json-tree.js'
import type {JsonNode} from '../envelope/json-tree.js'
import type {MessageView} from './message-view.js'

/**
 * The values a `--where` expression sees, built from the envelope's lossless tree (never from
 * JSON.parse): a number written without a fraction or exponent is a CEL int (a BigInt, exact at
 * any size, so ids beyond 2^53 compare exactly); one with a fraction or exponent is a CEL double
 * (the nearest IEEE 754 value, as JSON.parse would give). Objects become maps with no prototype,
 * so an expression can reach nothing but the message's own keys.
 */

export type CelValue = bigint | number | string | boolean | null | CelValue[] | {[key: string]: CelValue}

/** The JSON value of a node, with integers as BigInt. A duplicate key keeps its last value, as the codec reads it. */
export function celValueOf(text: string, node: JsonNode): CelValue {
  switch (node.kind) {
    case 'string': return node.value
    case 'true': return true
    case 'false': return false
    case 'null': return null
    case 'number': return numberOf(sourceOf(text, node))
    case 'array': return node.items.map((item) => celValueOf(text, item))
    case 'object': {
      const map: {[key: string]: CelValue} = Object.create(null) as {[key: string]: CelValue}
      for (const member of node.members) map[member.key] = celValueOf(text, member.value)
      return map
    }
  }
}

function numberOf(source: string): bigint | number {
  return /^-?\d+$/.test(source) ? BigInt(source) : Number(source)
}

/** The variables of one message: the envelope's top-level members and its application headers. */
export function whereActivation(view: MessageView): Record<string, CelValue> {
  const envelope = view.envelope
  const top: {[key: string]: CelValue} = Object.create(null) as {[key: string]: CelValue}
  if (envelope !== undefined) {
    for (const member of envelope.root.members) top[member.key] = celValueOf(envelope.text, member.value)
  }
  const member = (key: string): CelValue => top[key] ?? null
  return {
    data: member('data'),
    meta: member('meta'),
    // The broker's reconciled count (the one every command shows), else the body's.
    attempts: view.attempts === undefined ? member('attempts') : BigInt(view.attempts),
    dead_letter: envelope?.node('dead_letter')?.kind === 'object' ? member('dead_letter') : nativeDeadLetter(view),
    job: view.urn ?? null,
    trace_id: view.traceId ?? null,
    headers: Object.assign(Object.create(null) as {[key: string]: CelValue}, view.message.appHeaders),
  }
}

/** What a broker's own dead-letter facility recorded, under the envelope's key names. */
function nativeDeadLetter(view: MessageView): CelValue {
  const dead = view.deadLetter
  if (dead === undefined) return null
  const map: {[key: string]: CelValue} = Object.create(null) as {[key: string]: CelValue}
  if (dead.reason !== undefined) map.reason = dead.reason
  if (dead.error !== undefined) map.error = dead.error
  if (dead.exception !== undefined) map.exception = dead.exception
  if (dead.failedAt !== undefined) map.failed_at = BigInt(Math.trunc(dead.failedAt))
  if (dead.originalQueue !== undefined) map.original_queue = dead.originalQueue
  if (dead.attempts !== undefined) map.attempts = BigInt(Math.trunc(dead.attempts))
  return map
}
