import {escapeData, escapeProperty, xml} from './ci-escape.js'
import {style} from './style.js'
import type {OutputWriter} from './writer.js'

/**
 * The report formats of the `bq schema` commands: text, GitHub workflow annotations and JUnit
 * XML, over one model: a case per checked item (a URN, a schema file), each with its issues.
 * Under --json the command returns its own result instead (json-output.ts).
 */

export type SchemaFormat = 'text' | 'github' | 'junit'
export const SCHEMA_FORMATS: SchemaFormat[] = ['text', 'github', 'junit']

export interface SchemaIssue {
  /** error fails the run; warning is shown and does not (unless the command says otherwise). */
  severity: 'error' | 'warning'
  /** A label for text output when the severity alone says too little (`breaking`, `unproven`). */
  label?: string
  rule: string
  message: string
  /** The file to annotate (relative paths read best in CI) and its 1-based line, when known. */
  file?: string
  line?: number
  /** The JSON path of the data (or schema) concerned. */
  path?: string
}

export interface SchemaCase {
  name: string
  file?: string
  issues: SchemaIssue[]
  /** A short word for text output when the case passed (`unchanged`, `added`, `ok`). */
  note?: string
}

export interface SchemaReport {
  /** `bq schema compat`, `bq schema check`, …: the JUnit suite and the GitHub titles. */
  command: string
  cases: SchemaCase[]
  summary: string
}

/** `quiet`: text output shows only the cases with issues (a registry of 500 unchanged URNs is one line). */
export function writeSchemaReport(out: OutputWriter, format: SchemaFormat, report: SchemaReport, options: {quiet?: boolean} = {}): void {
  if (format === 'github') github(out, report)
  else if (format === 'junit') junit(out, report)
  else text(out, options.quiet ? {...report, cases: report.cases.filter((c) => c.issues.length > 0)} : report)
}

const where = (issue: SchemaIssue) => (issue.file === undefined ? '' : `${issue.file}${issue.line === undefined ? '' : `:${issue.line}`}`)

function text(out: OutputWriter, report: SchemaReport): void {
  for (const c of report.cases) {
    const failed = c.issues.some((i) => i.severity === 'error')
    const mark = failed ? style.red('✗') : c.issues.length > 0 ? style.yellow('!') : style.green('✓')
    out.line(`${mark} ${c.name}${c.note ? `  ${style.dim(c.note)}` : ''}`)
    for (const issue of c.issues) {
      const label = (issue.label ?? issue.severity).padEnd(8)
      const coloured = issue.severity === 'error' ? style.red(label) : style.yellow(label)
      out.line(`    ${coloured} ${issue.path ? `${issue.path}  ` : ''}${issue.message}  ${style.dim(`[${issue.rule}]${where(issue) ? ` ${where(issue)}` : ''}`)}`)
    }
  }
  out.line(report.summary)
}

function github(out: OutputWriter, report: SchemaReport): void {
  for (const c of report.cases) {
    for (const issue of c.issues) {
      const props: string[] = []
      if (issue.file !== undefined) props.push(`file=${escapeProperty(issue.file)}`)
      if (issue.line !== undefined) props.push(`line=${issue.line}`)
      props.push(`title=${escapeProperty(`${report.command} ${issue.rule}`)}`)
      const subject = [c.name, issue.path].filter(Boolean).join(' ')
      out.line(`::${issue.severity} ${props.join(',')}::${escapeData(`${subject}: ${issue.message}`)}`)
    }
  }
  out.line(`${report.command}: ${report.summary}`)
}

function junit(out: OutputWriter, report: SchemaReport): void {
  const failures = report.cases.filter((c) => c.issues.some((i) => i.severity === 'error')).length
  out.line('<?xml version="1.0" encoding="UTF-8"?>')
  out.line(`<testsuites name="${xml(report.command)}" tests="${report.cases.length}" failures="${failures}">`)
  out.line(`  <testsuite name="${xml(report.command)}" tests="${report.cases.length}" failures="${failures}" errors="0">`)
  const describe = (i: SchemaIssue) => `${i.label ?? i.severity} ${i.path ? `${i.path}: ` : ''}${i.message} [${i.rule}]${where(i) ? ` ${where(i)}` : ''}`
  for (const c of report.cases) {
    out.line(`    <testcase classname="${xml(c.file ?? report.command)}" name="${xml(c.name)}">`)
    const errors = c.issues.filter((i) => i.severity === 'error')
    if (errors.length > 0) out.line(`      <failure message="${xml(errors[0].message)}" type="${xml(errors[0].rule)}">${xml(c.issues.map(describe).join('\n'))}</failure>`)
    else if (c.issues.length > 0) out.line(`      <system-out>${xml(c.issues.map(describe).join('\n'))}</system-out>`)
    out.line('    </testcase>')
  }
  out.line('  </testsuite>')
  out.line('</testsuites>')
}
