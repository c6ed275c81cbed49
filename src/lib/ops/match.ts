import {UsageError} from '../errors.js'
import type {MessageView} from './message-view.js'
import type {Selector} from './selector.js'
import {parseTimeWindow, windowSelector} from './time-window.js'
import type {TimeBasis} from './time-window.js'
import {UnsupportedPattern, linearRegExp} from '../linear-regexp.js'

/**
 * Message selection shared by every command that picks messages (peek, dlq inspect, redrive,
 * replay): `--select KEY=GLOB` (shell-style `*` and `?`, whole value) or `KEY~REGEX` (JavaScript
 * regular expression, anywhere in the value), `--where` (a CEL expression, where.ts) and
 * `--since`/`--until` (time-window.ts). Every selector must match (AND).
 */

export const SELECT_KEYS = ['reason', 'urn', 'exception', 'error', 'original_queue', 'lang', 'id', 'trace_id', 'queue', 'attempts'] as const
export type SelectKey = (typeof SELECT_KEYS)[number]


/** A selector on one key's value (a message lacking the key never matches it). */
export function keySelector(key: SelectKey, test: (value: string) => boolean, text: string): Selector {
  return {
    text,
    matches: (view) => {
      const value = selectValue(view, key)
      return value !== undefined && test(value)
    },
  }
}

/** The selection flags every selecting command takes (flags.ts `selectionFlags`). */
export interface SelectionFlags {
  select?: string[]
  where?: string
  since?: string
  until?: string
}

/**
 * The selectors the selection flags ask for, compiled once per run (a bad one is a usage error,
 * exit 2, before anything is read). `basis` is the time --since/--until look at. The CEL
 * library (a tenth of bq's start) is loaded only for a `--where`.
 */
export async function selectorsFromFlags(flags: SelectionFlags, basis: TimeBasis, now = Date.now()): Promise<Selector[]> {
  const selectors = (flags.select ?? []).map(parseSelector)
  if (flags.where !== undefined) {
    const {compileWhere} = await import('./where.js')
    selectors.push(compileWhere(flags.where))
  }
  const window = parseTimeWindow(flags, now)
  if (window !== undefined) selectors.push(windowSelector(window, basis))
  return selectors
}

/** Compiles a shell-style glob (`*`, `?`) to an anchored regular expression. */
export function globToRegExp(glob: string): RegExp {
  let source = ''
  for (const char of glob) {
    if (char === '*') source += '.*'
    else if (char === '?') source += '.'
    else source += char.replace(/[.+^${}()|[\]\\/]/g, '\\$&')
  }
  return new RegExp(`^${source}$`, 's')
}

export function parseSelector(text: string): Selector {
  const match = /^([a-z_]+)\s*(=|~)(.*)$/s.exec(text)
  if (!match) throw new UsageError(`--select "${text}": expected KEY=GLOB or KEY~REGEX (keys: ${SELECT_KEYS.join(', ')})`)
  const [, key, operator, pattern] = match
  if (!(SELECT_KEYS as readonly string[]).includes(key)) throw new UsageError(`--select "${text}": unknown key "${key}" (keys: ${SELECT_KEYS.join(', ')})`)
  let regex: {test(value: string): boolean}
  if (operator === '=') {
    regex = globToRegExp(pattern)
  } else {
    try {
      // Matched against message content: linear time, whatever the pattern (linear-regexp.ts).
      regex = linearRegExp(pattern)
    } catch (error) {
      if (error instanceof UnsupportedPattern) throw new UsageError(`--select "${text}": ${error.message}`)
      throw new UsageError(`--select "${text}": invalid regular expression: ${(error as Error).message}`)
    }
  }
  return keySelector(key as SelectKey, (value) => regex.test(value), text)
}

/** The value a selector key reads from a message; undefined when the message has none. */
export function selectValue(view: MessageView, key: SelectKey): string | undefined {
  const dead = view.deadLetter
  switch (key) {
    case 'reason': return dead?.reason
    case 'exception': return dead?.exception
    case 'error': return dead?.error
    case 'original_queue': return dead?.originalQueue
    case 'urn': return view.urn
    case 'lang': return view.lang
    case 'id': return view.id
    case 'trace_id': return view.traceId
    case 'queue': return view.queue
    case 'attempts': return view.attempts === undefined ? undefined : String(view.attempts)
  }
}

/** True when the message satisfies every selector. */
export function matchesAll(view: MessageView, selectors: Selector[]): boolean {
  for (const selector of selectors) {
    if (!selector.matches(view)) return false
  }
  return true
}
