import type {SchemaCase, SchemaIssue, SchemaReport} from '../output/schema-report.js'
import type {CompatResult} from './compat.js'
import type {RegistryCompat} from './compat-registry.js'
import type {SampleResult} from './compat-sample.js'
import type {CompatFinding} from './compat-types.js'
import {SchemaLines} from './schema-lines.js'

/**
 * What `bq schema compat` reports: the verdict, each finding with its file and line, and the
 * same as the JSON result (snake_case, docs/output-and-exit-codes.md) and the CI formats.
 */

export type Verdict = 'compatible' | 'unproven' | 'breaking'

export interface FindingJson {
  severity: CompatFinding['severity']
  rule: string
  path: string
  schema_path: string
  file: string
  line?: number
  message: string
}

export interface FileSide {
  file: string
  text?: string
}

export function verdictOf(counts: {breaking: number; unproven: number}, sample?: SampleResult): Verdict {
  if (counts.breaking > 0 || (sample?.regressions ?? 0) > 0) return 'breaking'
  return counts.unproven > 0 ? 'unproven' : 'compatible'
}

export function findingsJson(result: CompatResult, sides: {old: FileSide; next: FileSide}): FindingJson[] {
  const lines = {old: sides.old.text === undefined ? undefined : new SchemaLines(sides.old.text), next: sides.next.text === undefined ? undefined : new SchemaLines(sides.next.text)}
  return result.findings.map((f) => {
    const side = f.side === 'old' ? 'old' : 'next'
    const line = lines[side]?.lineOf(f.schemaPath)
    return {severity: f.severity, rule: f.rule, path: f.path, schema_path: f.schemaPath || '/', file: sides[side].file, ...(line === undefined ? {} : {line}), message: f.message}
  })
}

export function issueOf(f: FindingJson, strict: boolean): SchemaIssue {
  // --strict: what compat cannot prove compatible fails the run too.
  return {severity: f.severity === 'breaking' || strict ? 'error' : 'warning', label: f.severity, rule: f.rule, message: f.message, file: f.file, line: f.line, path: f.path}
}

export function sampleCase(sample: SampleResult): SchemaCase {
  const issues: SchemaIssue[] = sample.examples.map((e) => ({
    severity: 'error',
    label: 'rejected',
    rule: 'sample.rejected',
    message: `${e.urn ?? 'message'}${e.id ? ` ${e.id}` : ''}: ${e.problems.join('; ')}`,
    file: sample.source,
    line: e.line,
  }))
  const note = `${sample.checked} checked, ${sample.new_rejected} rejected by NEW, ${sample.regressions} of them accepted by OLD`
  return {name: `sample ${sample.source}`, file: sample.source, issues: sample.regressions > 0 ? issues : issues.map((i) => ({...i, severity: 'warning'})), note}
}

export {preview as witnessText} from './compat.js'

export function summaryLine(verdict: Verdict, counts: {breaking: number; unproven: number; warnings: number}, extra = ''): string {
  const word = verdict === 'breaking' ? 'BREAKING' : verdict === 'unproven' ? 'cannot prove compatible' : 'compatible'
  return `${word} (${counts.breaking} breaking, ${counts.unproven} unproven, ${counts.warnings} warning${counts.warnings === 1 ? '' : 's'})${extra}`
}

export interface UrnJson {
  urn: string
  status: string
  verdict: Verdict
  file?: string
  suggested_urn?: string
  witness?: {value: unknown}
  findings: FindingJson[]
}

export function registryCompatJson(compat: RegistryCompat): UrnJson[] {
  return compat.urns.map((u) => {
    const findings = u.result ? findingsJson(u.result, {old: {file: `${u.file} (at ${compat.against})`}, next: {file: u.file ?? compat.registry, text: u.text}}) : []
    const verdict: Verdict = u.status === 'removed' ? 'breaking' : u.result ? verdictOf(u.result) : 'compatible'
    return {urn: u.urn, status: u.status, verdict, ...(u.file === undefined ? {} : {file: u.file}), ...(u.suggestedUrn === undefined ? {} : {suggested_urn: u.suggestedUrn}), ...(u.result?.witness ? {witness: u.result.witness} : {}), findings}
  })
}

export function registryReport(urns: UrnJson[], strict: boolean, summary: string, sample?: SampleResult): SchemaReport {
  const cases: SchemaCase[] = urns.map((u) => {
    const issues = u.findings.map((f) => issueOf(f, strict))
    if (u.status === 'removed') issues.push({severity: 'error', label: 'breaking', rule: 'urn.removed', message: `${u.urn} was removed: its consumers lose their schema (keep it, deprecated, until no producer sends it)`, file: u.file})
    if (u.suggested_urn) issues.push({severity: 'error', label: 'breaking', rule: 'urn.mint', message: `publish the new shape as ${u.suggested_urn} instead of changing ${u.urn}`, file: u.file})
    return {name: u.urn, file: u.file, issues, note: u.status === 'changed' ? undefined : u.status}
  })
  if (sample) cases.push(sampleCase(sample))
  return {command: 'bq schema compat', cases, summary}
}
