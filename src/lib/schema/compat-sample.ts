import {decode, EnvelopeDecodeError} from '../envelope/envelope.js'
import {readExportLine} from '../envelope/export-line.js'
import {UsageError} from '../errors.js'
import {readMessages} from '../ops/read-messages.js'
import {SchemaRegistry} from './registry.js'

/**
 * `bq schema compat --sample FILE|-`: real envelopes (a `bq peek --jsonl` export, with or
 * without headers) run through the NEW schema, and the OLD one, so a change the static rules
 * call unproven meets data: what NEW rejects that OLD accepted is a proven break.
 */

export interface SampleExample {
  line: number
  urn?: string
  id?: string
  problems: string[]
}

export interface SampleResult {
  source: string
  messages: number
  /** Messages that had a schema to check against (the single NEW schema, or their URN's). */
  checked: number
  old_accepted: number
  new_rejected: number
  /** Accepted by OLD and rejected by NEW: each is data the change breaks. */
  regressions: number
  /** Lines that were not envelopes, or masked export lines (their data is not the message's). */
  skipped: number
  examples: SampleExample[]
}

/** The OLD and NEW schema for a URN; undefined when the sample's message has nothing to be checked against. */
export type SchemaPair = (urn: string | undefined) => {old?: unknown; next?: unknown} | undefined

const MAX_EXAMPLES = 3

export async function checkSample(input: string, pair: SchemaPair): Promise<SampleResult> {
  const source = input === '-' ? '<stdin>' : input
  const result: SampleResult = {source, messages: 0, checked: 0, old_accepted: 0, new_rejected: 0, regressions: 0, skipped: 0, examples: []}
  const compiled = new Map<string, {old?: SchemaRegistry; next?: SchemaRegistry}>()
  const registries = (urn: string | undefined) => {
    const key = urn ?? ''
    let found = compiled.get(key)
    if (found === undefined) {
      const schemas = pair(urn)
      found = {
        old: schemas?.old === undefined ? undefined : SchemaRegistry.fromSchema(key, schemas.old, `old schema of ${key || 'the sample'}`),
        next: schemas?.next === undefined ? undefined : SchemaRegistry.fromSchema(key, schemas.next, `new schema of ${key || 'the sample'}`),
      }
      compiled.set(key, found)
    }
    return found
  }
  let unreadable: string | undefined
  await readMessages(input, (message) => {
    if (message.readError && message.line === 0) {
      unreadable = message.readError.message
      return
    }
    result.messages++
    if (message.text === undefined) {
      result.skipped++
      return
    }
    let text = message.text
    const line = readExportLine(text)
    if (line.kind === 'masked' || line.kind === 'broken') {
      result.skipped++
      return
    }
    if (line.kind === 'wrapped') text = line.envelope
    let urn: string | undefined
    let id: string | undefined
    let data: unknown
    try {
      const envelope = decode(text)
      urn = envelope.urn
      id = envelope.id
      data = envelope.value('data')
    } catch (error) {
      if (!(error instanceof EnvelopeDecodeError)) throw error
      result.skipped++
      return
    }
    const {old, next} = registries(urn)
    if (next === undefined) return
    result.checked++
    const key = urn ?? ''
    const oldOk = old === undefined ? undefined : (old.check(key, data) ?? []).length === 0
    const problems = next.check(key, data) ?? []
    if (oldOk) result.old_accepted++
    if (problems.length === 0) return
    result.new_rejected++
    if (oldOk) result.regressions++
    if (result.examples.length < MAX_EXAMPLES && oldOk !== false) {
      result.examples.push({line: message.line, urn, id, problems: problems.slice(0, 3).map((p) => `${p.path} ${p.message}`)})
    }
  })
  if (unreadable !== undefined) throw new UsageError(`--sample ${source}: ${unreadable}`)
  return result
}
