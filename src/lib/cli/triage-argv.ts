/**
 * `bq dlq triage` acts only through the existing commands: this file builds their argv for a
 * group or one message, and the shell line an operator can paste into a runbook.
 */
import {shellWord} from '../output/shell-word.js'

export {shellWord}

/** What a triage action applies to: a group from `dlq inspect` (by reason and URN) or one message. */
export type TriageTarget = {kind: 'group'; reason: string; urn: string} | {kind: 'message'; id: string}

/** The flags every child command shares with the triage session: where the DLQ is, on which broker. */
export interface TriageScope {
  queue: string
  dlq?: string
  /** The broker as given on the triage command line (passed to the child, never printed). */
  broker?: string
  /** What the printed line shows for the broker: its display URL, password masked. */
  brokerShown?: string
  context?: string
  receive?: boolean
}

/** Glob characters (ops/match.ts globToRegExp): a value with none of them selects itself with `=`. */
const GLOB_CHARS = /[*?]/

/** One --select matching exactly `value` for `key`. */
export function exactSelect(key: string, value: string): string {
  if (!GLOB_CHARS.test(value)) return `${key}=${value}`
  return `${key}~^${value.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}$`
}

export function selectArgs(target: TriageTarget): string[] {
  if (target.kind === 'message') return ['--select', exactSelect('id', target.id)]
  return ['--select', exactSelect('reason', target.reason), '--select', exactSelect('urn', target.urn)]
}

/** A CEL string literal (JSON's string syntax is CEL's). */
const celString = (value: string) => JSON.stringify(value)

/** peek has no --select: the same messages, said with --urn and --where. */
export function peekFilterArgs(target: TriageTarget): string[] {
  if (target.kind === 'message') return ['--where', `meta.id == ${celString(target.id)}`]
  return ['--where', `dead_letter.reason == ${celString(target.reason)} && job == ${celString(target.urn)}`]
}

/** The argv of one child command, for running (`shown: false`) or printing (`shown: true`). */
export function commandArgv(command: string[], scope: TriageScope, rest: string[], shown: boolean): string[] {
  const argv = [...command]
  if (scope.dlq !== undefined && command[0] === 'dlq') argv.push('--dlq', scope.dlq)
  argv.push(...rest)
  if (scope.context !== undefined) argv.push('--context', scope.context)
  else if (scope.broker !== undefined) argv.push('--broker', shown ? (scope.brokerShown ?? scope.broker) : scope.broker)
  if (scope.receive) argv.push('--receive')
  return argv
}

export function commandLine(argv: string[], redirect?: string): string {
  const line = ['bq', ...argv].map(shellWord).join(' ')
  return redirect === undefined ? line : `${line} > ${shellWord(redirect)}`
}
