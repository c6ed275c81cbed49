import {validateEnvelopeText} from '../envelope/validate.js'
import type {Problem} from '../envelope/validate.js'
import type {SchemaRegistry} from '../schema/registry.js'
import {readMessages} from './read-messages.js'
import type {MessageText} from './read-messages.js'
import {expandInputs} from './expand-inputs.js'

/**
 * The `bq validate` engine: expands inputs, streams their messages, checks each envelope (and
 * its data against the registry), and hands each verdict to a reporter as it is made.
 */

export interface ValidateOptions {
  registry?: SchemaRegistry
  /** Validate bare `data` objects against this URN's schema instead of envelopes. */
  urn?: string
  /** Warnings count as errors. */
  strict?: boolean
}

export interface MessageResult {
  source: string
  /** 1-based line (0 when the problem is about the input as a whole). */
  line: number
  valid: boolean
  urn?: string
  id?: string
  problems: Problem[]
}

export interface ValidateSummary {
  inputs: number
  messages: number
  valid: number
  invalid: number
  errors: number
  warnings: number
}

export interface Reporter {
  result(result: MessageResult): void | Promise<void>
}

export async function validateInputs(inputs: string[], options: ValidateOptions, reporter: Reporter): Promise<ValidateSummary> {
  const summary: ValidateSummary = {inputs: 0, messages: 0, valid: 0, invalid: 0, errors: 0, warnings: 0}
  const record = async (result: MessageResult) => {
    if (options.strict) result.problems = result.problems.map((p) => (p.severity === 'warning' ? {...p, severity: 'error'} : p))
    result.valid = !result.problems.some((p) => p.severity === 'error')
    summary.messages++
    if (result.valid) summary.valid++
    else summary.invalid++
    for (const problem of result.problems) {
      if (problem.severity === 'error') summary.errors++
      else summary.warnings++
    }
    await reporter.result(result)
  }

  for (const input of await expandInputs(inputs)) {
    summary.inputs++
    if (input.error) {
      await record({source: input.path, line: 0, valid: false, problems: [{severity: 'error', code: input.error.code, path: '$', message: input.error.message}]})
      continue
    }
    await readMessages(input.path, (message) => record(checkMessage(message, options)))
  }
  return summary
}

/** One message's verdict (before `--strict` is applied). */
export function checkMessage(message: MessageText, options: ValidateOptions): MessageResult {
  const base = {source: message.source, line: message.line, valid: false}
  if (message.readError || message.text === undefined) {
    const error = message.readError ?? {code: 'input.unreadable', message: 'could not be read'}
    return {...base, problems: [{severity: 'error', code: error.code, path: '$', message: error.message}]}
  }
  const problems: Problem[] = []
  if (message.bom) problems.push({severity: 'warning', code: 'encoding.bom', path: '$', message: 'starts with a UTF-8 byte order mark; BabelQueue bodies are plain UTF-8 JSON'})
  if (options.urn !== undefined) return {...base, urn: options.urn, problems: problems.concat(checkBareData(message.text, options))}

  const check = validateEnvelopeText(message.text)
  problems.push(...check.problems)
  if (options.registry && check.value && check.urn !== undefined) {
    const data = check.value.data
    if (typeof data === 'object' && data !== null && !Array.isArray(data)) {
      const schemaProblems = options.registry.check(check.urn, data)
      if (schemaProblems === undefined) {
        problems.push({severity: 'warning', code: 'schema.unregistered', path: '$.job', message: `no schema is registered for ${check.urn}`})
      } else {
        problems.push(...schemaProblems)
      }
    }
  }
  return {...base, urn: check.urn, id: check.id, problems}
}

/** `--urn`: the message is a bare `data` object for that URN. */
function checkBareData(text: string, options: ValidateOptions): Problem[] {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return validateEnvelopeText(text).problems.filter((p) => p.code.startsWith('json.'))
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return [{severity: 'error', code: 'data.type', path: '$', message: 'data must be a JSON object'}]
  }
  const problems = options.registry?.check(options.urn as string, value, '$')
  if (problems === undefined) return [{severity: 'warning', code: 'schema.unregistered', path: '$', message: `no schema is registered for ${options.urn}`}]
  return problems
}
