/**
 * Plain JavaScript values of a lossless JSON tree, and the way back: `spliceJson` writes an edited
 * value as the original text with only what changed replaced, so every untouched byte (number
 * spellings, string escapes, whitespace, key order, duplicate keys) stays exactly as it was.
 *
 * Numbers never become JavaScript numbers (integers beyond 2^53 would lose digits): each one is a
 * one-key object `{[NUMBER_KEY]: normalized}`, whose normalized text compares equal for equal
 * values (99.90, 99.9 and 9.99e1 alike), which is what a JSON Patch `test` needs. The spelling it
 * was read with is kept aside (`SPELLING`), so a number that moves keeps its spelling too.
 */
import {memberOf, sourceOf} from './json-tree.js'
import type {ArrayNode, JsonNode, ObjectNode} from './json-tree.js'

/** The key of a number's one-key object: a NUL-prefixed name no envelope uses. */
export const NUMBER_KEY = '\u0000bq:number'

export type JsonNumber = {[NUMBER_KEY]: string}
export type JsonValue = null | boolean | string | JsonNumber | JsonValue[] | {[key: string]: JsonValue}

/** The source spelling of numbers read from a text (absent for numbers a patch's `copy` cloned). */
const SPELLING = new WeakMap<object, string>()

/** What `toJsonValue` made: the value, and which original node each of its containers came from. */
export interface TreeValue {
  value: JsonValue
  origins: WeakMap<object, JsonNode>
}

/** The JavaScript value of a node (of `text`); numbers as JsonNumber. */
export function toJsonValue(text: string, node: JsonNode, origins = new WeakMap<object, JsonNode>()): TreeValue {
  const convert = (current: JsonNode): JsonValue => {
    switch (current.kind) {
      case 'string': return current.value
      case 'true': return true
      case 'false': return false
      case 'null': return null
      case 'number': return numberValue(sourceOf(text, current))
      case 'array': {
        const items = current.items.map(convert)
        origins.set(items, current)
        return items
      }
      case 'object': {
        const object: {[key: string]: JsonValue} = {}
        // Last duplicate wins, as JSON.parse does; defineProperty so "__proto__" is an ordinary key.
        for (const member of current.members) Object.defineProperty(object, member.key, {value: convert(member.value), enumerable: true, writable: true, configurable: true})
        origins.set(object, current)
        return object
      }
    }
  }
  return {value: convert(node), origins}
}

/** A JsonNumber for a valid JSON number literal, remembering its spelling. */
export function numberValue(spelling: string): JsonNumber {
  const number = {[NUMBER_KEY]: normalizeNumber(spelling)}
  SPELLING.set(number, spelling)
  return number
}

export function isJsonNumber(value: unknown): value is JsonNumber {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && typeof (value as JsonNumber)[NUMBER_KEY] === 'string' && Object.keys(value).length === 1
}

/**
 * One spelling per value: no leading or trailing zeros, plain digits while that stays short,
 * else `<digits>e<exponent>`. Exact for any number of digits (no floating point involved).
 */
export function normalizeNumber(spelling: string): string {
  const match = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(spelling)
  if (match === null) return spelling
  const [, sign, whole, fraction = '', exponentText = '0'] = match
  let digits = (whole + fraction).replace(/^0+/, '')
  if (digits === '') return '0'
  let exponent = Number(exponentText) - fraction.length
  const trailing = /0*$/.exec(digits)?.[0].length ?? 0
  digits = digits.slice(0, digits.length - trailing)
  exponent += trailing
  if (exponent >= 0 && exponent <= 21) return sign + digits + '0'.repeat(exponent)
  if (exponent < 0 && -exponent <= digits.length + 6) {
    const point = digits.length + exponent
    return sign + (point > 0 ? `${digits.slice(0, point)}.${digits.slice(point)}` : `0.${'0'.repeat(-point)}${digits}`)
  }
  return `${sign}${digits}e${exponent}`
}

/**
 * The text of `value`, written over `node` (its place in `text` before the edit): containers that
 * came from the original (`origins`, or the node at the same place) are rewritten around their
 * original text, keeping every member and item whose value did not change byte for byte; new
 * values are written compactly.
 */
export function spliceJson(text: string, node: JsonNode | undefined, value: JsonValue, origins: WeakMap<object, JsonNode> = new WeakMap()): string {
  const write = (current: JsonValue, at: JsonNode | undefined): string => {
    if (current === null) return 'null'
    if (typeof current === 'boolean') return String(current)
    if (typeof current === 'string') return at?.kind === 'string' && at.value === current ? sourceOf(text, at) : JSON.stringify(current)
    if (isJsonNumber(current)) {
      // An equal number keeps the original spelling; else the spelling it was read with; else the normalized one.
      if (at?.kind === 'number' && normalizeNumber(sourceOf(text, at)) === current[NUMBER_KEY]) return sourceOf(text, at)
      return SPELLING.get(current) ?? current[NUMBER_KEY]
    }
    const origin = origins.get(current) ?? at
    if (Array.isArray(current)) return origin?.kind === 'array' ? writeArray(current, origin) : `[${current.map((item) => write(item, undefined)).join(',')}]`
    return origin?.kind === 'object' ? writeObject(current, origin) : `{${Object.keys(current).map((key) => `${JSON.stringify(key)}:${write(current[key], undefined)}`).join(',')}}`
  }

  /** Original members in their order (kept while their key is), their separators, then new keys. */
  const writeObject = (current: {[key: string]: JsonValue}, origin: ObjectNode): string => {
    const members = origin.members
    if (members.length === 0) return `{${Object.keys(current).map((key) => `${JSON.stringify(key)}:${write(current[key], undefined)}`).join(',')}}`
    let out = text.slice(origin.start, members[0].keyStart)
    let kept = 0
    members.forEach((member, index) => {
      if (!Object.hasOwn(current, member.key)) return
      if (kept > 0) out += text.slice(members[index - 1].value.end, member.keyStart)
      const last = memberOf(origin, member.key) === member
      // A shadowed duplicate (an earlier member with the same key) is dead text: kept as it was.
      out += text.slice(member.keyStart, member.value.start) + (last ? write(current[member.key], member.value) : sourceOf(text, member.value))
      kept++
    })
    for (const key of Object.keys(current)) {
      if (memberOf(origin, key) !== undefined) continue
      out += `${kept > 0 ? ',' : ''}${JSON.stringify(key)}:${write(current[key], undefined)}`
      kept++
    }
    return out + text.slice(members[members.length - 1].value.end, origin.end)
  }

  /** Items by position, with the original separators while there are some. */
  const writeArray = (current: JsonValue[], origin: ArrayNode): string => {
    const items = origin.items
    if (items.length === 0) return `[${current.map((item) => write(item, undefined)).join(',')}]`
    let out = text.slice(origin.start, items[0].start)
    current.forEach((item, index) => {
      if (index > 0) out += index < items.length ? text.slice(items[index - 1].end, items[index].start) : ','
      out += write(item, items[index])
    })
    return out + text.slice(items[items.length - 1].end, origin.end)
  }

  return write(value, node)
}
