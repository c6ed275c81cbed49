/**
 * Reads bq's metrics text back for the tests, with a real parser from npm:
 * parse-prometheus-text-format (the Prometheus text format, as client_python's parser reads it).
 * That parser takes OpenMetrics' `# UNIT` and `# EOF` lines for comments, as Prometheus's own
 * text parser does (and so node_exporter's textfile collector): parseOpenMetrics checks those
 * lines itself before handing the text over.
 */
import assert from 'node:assert/strict'

import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import type {ParsedFamily} from 'parse-prometheus-text-format'

export type {ParsedFamily} from 'parse-prometheus-text-format'

export interface ParsedExposition {
  families: ParsedFamily[]
  /** Family name → its `# UNIT`. */
  units: Map<string, string>
}

/** An OpenMetrics text: `# EOF` last and once, each `# UNIT` on a family named `…_<unit>`, then parsed. */
export function parseOpenMetrics(text: string): ParsedExposition {
  assert.ok(text.endsWith('# EOF\n'), `no closing "# EOF": ${JSON.stringify(text.slice(-40))}`)
  const lines = text.slice(0, -1).split('\n')
  assert.equal(lines.filter((line) => line === '# EOF').length, 1, 'one # EOF, at the end')
  const units = new Map<string, string>()
  for (const line of lines) {
    const unit = /^# UNIT (\S+) (\S+)$/.exec(line)
    if (unit === null) continue
    assert.ok(unit[1].endsWith(`_${unit[2]}`), `${unit[1]} does not end in its unit ${unit[2]}`)
    units.set(unit[1], unit[2])
  }
  const families = parseFamilies(text)
  for (const name of units.keys()) assert.ok(families.some((f) => f.name === name), `# UNIT for ${name}, which has no samples`)
  return {families, units}
}

/** The Prometheus text format 0.0.4: no OpenMetrics-only line, then parsed. */
export function parsePrometheusText(text: string): ParsedFamily[] {
  assert.doesNotMatch(text, /^# (EOF|UNIT)/m)
  return parseFamilies(text)
}

function parseFamilies(text: string): ParsedFamily[] {
  const families = parsePrometheusTextFormat(text)
  const names = families.map((f) => f.name)
  assert.deepEqual(names, [...new Set(names)], 'each metric family once')
  for (const f of families) assert.notEqual(f.type, 'UNTYPED', `${f.name} has no # TYPE before its samples`)
  return families
}

export function family(families: ParsedFamily[], name: string): ParsedFamily {
  const found = families.find((f) => f.name === name)
  assert.ok(found, `no metric family ${name} among ${families.map((f) => f.name).join(', ')}`)
  return found
}

/** The value of the sample with exactly these labels, or undefined when there is none. */
export function sampleValue(found: ParsedFamily, labels: Record<string, string>): number | undefined {
  const want = JSON.stringify(Object.entries(labels).sort())
  const sample = found.metrics.find((m) => JSON.stringify(Object.entries(m.labels ?? {}).sort()) === want)
  return sample === undefined ? undefined : Number(sample.value)
}
