import type {MessageResult, Reporter, ValidateSummary} from '../ops/validate-messages.js'
import type {OutputWriter} from './writer.js'
import {escapeData, escapeProperty, xml} from './ci-escape.js'
import {style} from './style.js'

/**
 * The `bq validate` report formats. Each reporter streams as results arrive (bounded memory),
 * except JUnit, which must know a file's counts before writing its suite.
 */

export type ValidateFormat = 'text' | 'github' | 'junit' | 'jsonl'

export interface FinishingReporter extends Reporter {
  finish(summary: ValidateSummary): void
}

const where = (r: MessageResult) => (r.line > 0 ? `${r.source}:${r.line}` : r.source)

/** Human report: one line per message, then its problems indented. */
export function textReporter(out: OutputWriter, options: {quiet?: boolean}): FinishingReporter {
  return {
    result(r) {
      if (options.quiet && r.problems.length === 0) return
      const mark = r.valid ? (r.problems.length > 0 ? style.yellow('!') : style.green('✓')) : style.red('✗')
      const label = [r.urn, r.id].filter(Boolean).join('  ')
      out.line(`${mark} ${where(r)}${label ? `  ${style.dim(label)}` : ''}`)
      for (const p of r.problems) {
        const severity = p.severity === 'error' ? style.red('error  ') : style.yellow('warning')
        out.line(`    ${severity} ${p.path}  ${p.message}  ${style.dim(`[${p.code}]`)}`)
      }
    },
    drain: () => out.maybeFlush(),
    finish(s) {
      const verdict = s.invalid === 0 ? style.green('all valid') : `${s.valid} valid, ${style.red(`${s.invalid} invalid`)}`
      out.line(`${s.messages} message${s.messages === 1 ? '' : 's'} in ${s.inputs} input${s.inputs === 1 ? '' : 's'}: ${verdict} (${s.errors} error${s.errors === 1 ? '' : 's'}, ${s.warnings} warning${s.warnings === 1 ? '' : 's'})`)
    },
  }
}

/** GitHub Actions workflow commands: annotations on the offending file and line. */
export function githubReporter(out: OutputWriter): FinishingReporter {
  return {
    result(r) {
      for (const p of r.problems) {
        const props = [`file=${escapeProperty(r.source)}`]
        if (r.line > 0) props.push(`line=${r.line}`)
        props.push(`title=${escapeProperty(`bq validate ${p.code}`)}`)
        out.line(`::${p.severity} ${props.join(',')}::${escapeData(`${p.path}: ${p.message}`)}`)
      }
    },
    drain: () => out.maybeFlush(),
    finish(s) {
      out.line(`bq validate: ${s.messages} messages, ${s.valid} valid, ${s.invalid} invalid, ${s.errors} errors, ${s.warnings} warnings`)
    },
  }
}

/** One JSON object per message, streamed: the machine format for huge inputs. */
export function jsonlReporter(out: OutputWriter): FinishingReporter {
  return {
    result(r) {
      out.line(JSON.stringify(r))
    },
    drain: () => out.maybeFlush(),
    finish(s) {
      out.line(JSON.stringify({summary: s}))
    },
  }
}

/** JUnit XML: a test suite per input file, a test case per message. */
export function junitReporter(out: OutputWriter): FinishingReporter {
  const suites = new Map<string, MessageResult[]>()
  return {
    result(r) {
      const list = suites.get(r.source) ?? []
      // Keep only what the XML needs: valid messages carry no problems to remember.
      list.push(r.problems.length === 0 ? {source: r.source, line: r.line, valid: true, urn: r.urn, problems: []} : r)
      suites.set(r.source, list)
    },
    drain: () => out.maybeFlush(),
    finish(s) {
      out.line('<?xml version="1.0" encoding="UTF-8"?>')
      out.line(`<testsuites name="bq validate" tests="${s.messages}" failures="${s.invalid}">`)
      for (const [source, results] of suites) {
        const failures = results.filter((r) => !r.valid).length
        out.line(`  <testsuite name="${xml(source)}" tests="${results.length}" failures="${failures}" errors="0">`)
        for (const r of results) {
          const name = `${where(r)}${r.urn ? ` ${r.urn}` : ''}`
          out.line(`    <testcase classname="${xml(source)}" name="${xml(name)}">`)
          const errors = r.problems.filter((p) => p.severity === 'error')
          if (errors.length > 0) {
            out.line(`      <failure message="${xml(errors[0].message)}" type="${xml(errors[0].code)}">${xml(r.problems.map((p) => `${p.severity} ${p.path}: ${p.message} [${p.code}]`).join('\n'))}</failure>`)
          } else if (r.problems.length > 0) {
            out.line(`      <system-out>${xml(r.problems.map((p) => `${p.severity} ${p.path}: ${p.message} [${p.code}]`).join('\n'))}</system-out>`)
          }
          out.line('    </testcase>')
        }
        out.line('  </testsuite>')
      }
      out.line('</testsuites>')
    },
  }
}
