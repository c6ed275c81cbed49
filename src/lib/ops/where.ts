import {Environment} from '@marcbachmann/cel-js'

import {UsageError} from '../errors.js'
import type {Selector} from './selector.js'
import type {MessageView} from './message-view.js'
import {whereActivation} from './where-values.js'

/**
 * `--where EXPR`: a CEL expression (the Common Expression Language: no loops, no side effects,
 * no access to anything but the variables below) over each message. Compiled and type-checked
 * once per run; evaluated per message. An evaluation error on one message (a missing key, a
 * type mismatch) means that message does not match: `has(data.x)` tests for a key first.
 */

/** The variables an expression may name (docs/messages.md, "Selecting messages"). */
export const WHERE_VARIABLES = ['data', 'meta', 'attempts', 'dead_letter', 'job', 'trace_id', 'headers'] as const

const environment = new Environment({unlistedVariablesAreDyn: false, homogeneousAggregateLiterals: false})
for (const name of WHERE_VARIABLES) environment.registerVariable(name, name === 'headers' ? 'map<string, string>' : 'dyn')

interface CelProblem {
  summary?: string
  message?: string
  range?: {start: number}
}

/** One line naming the column: `--where: column 7: Unexpected token: EOF (in: data.x == )`. */
function usageErrorOf(expression: string, problem: CelProblem): UsageError {
  const summary = (problem.summary ?? problem.message ?? 'invalid expression').split('\n')[0]
  const column = problem.range === undefined ? '' : ` column ${problem.range.start + 1}:`
  return new UsageError(`--where:${column} ${summary} (in: ${oneLine(expression)})`, 'where')
}

/** The expression on one line (a multi-line one keeps its columns per line, but the message stays one line). */
function oneLine(expression: string): string {
  return expression.replace(/\s*\n\s*/g, ' ')
}

/** Compiles `--where` into a selector; a syntax or type error is a usage error (exit 2) with its column. */
export function compileWhere(expression: string): Selector {
  let program: ReturnType<Environment['parse']>
  try {
    program = environment.parse(expression)
  } catch (error) {
    throw usageErrorOf(expression, error as CelProblem)
  }
  const checked = program.check()
  if (!checked.valid) throw usageErrorOf(expression, checked.error ?? {})
  if (checked.type !== 'bool' && checked.type !== 'dyn') {
    throw new UsageError(`--where: the expression gives ${checked.type ?? 'no value'}, not true or false: compare it (== != < > in) (in: ${oneLine(expression)})`, 'where')
  }
  return {
    text: `where ${expression}`,
    matches: (view: MessageView) => {
      // A body that is not an envelope has no fields to test.
      if (view.envelope === undefined) return false
      try {
        return program(whereActivation(view)) === true
      } catch {
        return false
      }
    },
  }
}
