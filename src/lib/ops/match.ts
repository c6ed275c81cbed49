import {UsageError} from '../errors.js'
import type {MessageView} from './message-view.js'

/**
 * Message selection shared by peek filters and `--select`: `KEY=GLOB` (shell-style `*` and `?`,
 * whole value) or `KEY~REGEX` (JavaScript regular expression, anywhere in the value). Several
 * selectors are ANDed.
 */

export const SELECT_KEYS = ['reason', 'urn', 'exception', 'error', 'original_queue', 'lang', 'id', 'trace_id', 'queue', 'attempts'] as const
export type SelectKey = (typeof SELECT_KEYS)[number]

export interface Selector {
  key: SelectKey
  test: (value: string) => boolean
  text: string
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
  let regex: RegExp
  if (operator === '=') {
    regex = globToRegExp(pattern)
  } else {
    try {
      regex = new RegExp(pattern)
    } catch (error) {
      throw new UsageError(`--select "${text}": invalid regular expression: ${(error as Error).message}`)
    }
  }
  return {key: key as SelectKey, test: (value) => regex.test(value), text}
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

/** True when the message satisfies every selector (a message lacking a key never matches it). */
export function matchesAll(view: MessageView, selectors: Selector[]): boolean {
  for (const selector of selectors) {
    const value = selectValue(view, selector.key)
    if (value === undefined || !selector.test(value)) return false
  }
  return true
}
