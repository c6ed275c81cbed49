import {readExportLine} from '../envelope/export-line.js'
import {FRAME_KEY, readFrame} from '../envelope/frame.js'
import {validateEnvelopeText} from '../envelope/validate.js'
import type {EnvelopeCheck, Problem} from '../envelope/validate.js'
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
  /** Called synchronously per message. */
  result(result: MessageResult): void
  /** Called between input chunks: the place to wait for output back-pressure. */
  drain?(): Promise<void>
}

export async function validateInputs(inputs: string[], options: ValidateOptions, reporter: Reporter): Promise<ValidateSummary> {
  const summary: ValidateSummary = {inputs: 0, messages: 0, valid: 0, invalid: 0, errors: 0, warnings: 0}
  const record = (result: MessageResult) => {
    if (options.strict) result.problems = result.problems.map((p) => (p.severity === 'warning' ? {...p, severity: 'error'} : p))
    result.valid = !result.problems.some((p) => p.severity === 'error')
    summary.messages++
    if (result.valid) summary.valid++
    else summary.invalid++
    for (const problem of result.problems) {
      if (problem.severity === 'error') summary.errors++
      else summary.warnings++
    }
    reporter.result(result)
  }

  for (const input of await expandInputs(inputs)) {
    summary.inputs++
    if (input.error) {
      record({source: input.path, line: 0, valid: false, problems: [{severity: 'error', code: input.error.code, path: '$', message: input.error.message}]})
      continue
    }
    await readMessages(input.path, (message) => record(checkMessage(message, options)), {afterChunk: reporter.drain && (() => (reporter.drain as () => Promise<void>)())})
  }
  return summary
}

/** One message's verdict (before `--strict` is applied). */
export function checkMessage(message: MessageText, options: ValidateOptions): MessageResult {
  const {source, line} = message
  if (message.readError || message.text === undefined) {
    const error = message.readError ?? {code: 'input.unreadable', message: 'could not be read'}
    return {source, line, valid: false, problems: [{severity: 'error', code: error.code, path: '$', message: error.message}]}
  }
  if (options.urn !== undefined) {
    const problems = checkBareData(message.text, options)
    if (message.bom) problems.unshift(BOM_PROBLEM)
    return {source, line, valid: false, urn: options.urn, problems}
  }
  const check = checkEnvelopeOrExportLine(message.text)
  const problems = check.problems
  if (message.bom) problems.unshift(BOM_PROBLEM)
  const data = check.value?.data
  if (options.registry && check.urn !== undefined && typeof data === 'object' && data !== null && !Array.isArray(data)) {
    const schemaProblems = options.registry.check(check.urn, data)
    if (schemaProblems === undefined) {
      problems.push({severity: 'warning', code: 'schema.unregistered', path: '$.job', message: `no schema is registered for ${check.urn}`})
    } else {
      for (const problem of schemaProblems) problems.push(problem)
    }
  }
  return {source, line, valid: false, urn: check.urn, id: check.id, problems}
}

/**
 * A `peek --jsonl --with-headers` line is checked as the envelope inside it (paths under
 * `$.envelope`); a broken wrapper is one error. Any other text is an envelope.
 */
function checkEnvelopeOrExportLine(text: string): EnvelopeCheck {
  // A Redis value exported whole (`peek --raw`) may be the SDKs' frame: the envelope inside is checked.
  const frame = readFrame(text)
  if (frame.kind === 'malformed') return {problems: [{severity: 'error', code: 'frame.invalid', path: '$', message: frame.reason}]}
  if (frame.kind === 'frame') {
    const check = validateEnvelopeText(frame.body.toString('utf8'))
    return {...check, problems: check.problems.map((problem) => ({...problem, message: `${problem.message} (in the ${FRAME_KEY} frame's body)`}))}
  }
  const exported = readExportLine(text)
  if (exported.kind === 'envelope') return validateEnvelopeText(text)
  if (exported.kind === 'broken') return {problems: [{severity: 'error', code: 'export.line', path: exported.path, message: exported.message}]}
  const check = validateEnvelopeText(exported.envelope)
  const problems = check.problems.map((problem) => ({...problem, path: `$.envelope${problem.path.slice(1)}`}))
  if (exported.kind === 'masked') problems.push({severity: 'warning', code: 'export.masked', path: '$.masked', message: `a masked export line (${exported.fields.join(', ')} masked): bq replay refuses it`})
  return {...check, problems}
}

const BOM_PROBLEM: Problem = {severity: 'warning', code: 'encoding.bom', path: '$', message: 'starts with a UTF-8 byte order mark; BabelQueue bodies are plain UTF-8 JSON'}

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
