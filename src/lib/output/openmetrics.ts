import {OutputWriter} from './writer.js'

/**
 * The metrics text bq writes for `--format openmetrics` and `--format prometheus`: the one place
 * that knows the exposition syntax (names, escaping, values, the closing `# EOF`). Commands map
 * their results to MetricFamily values (dlq-metrics.ts, inflight-metrics.ts) and call
 * writeExposition.
 *
 * - `openmetrics`: the OpenMetrics 1.0 text format: `# HELP`, `# TYPE`, `# UNIT` where a unit
 *   applies, and `# EOF` last.
 * - `prometheus`: the Prometheus text format 0.0.4: no `# UNIT`, no `# EOF`, and HELP escapes only
 *   `\\` and `\n` (older Prometheus parsers refuse `\"` there; OpenMetrics requires it).
 */
export type ExpositionFormat = 'openmetrics' | 'prometheus'

export interface MetricSample {
  /** Label names to values, in the order they are written. */
  labels: Record<string, string>
  value: number
}

export interface MetricFamily {
  /** The whole metric name, unit suffix included (`bq_dlq_oldest_failed_age_seconds`). */
  name: string
  type: 'gauge'
  help: string
  /** An OpenMetrics unit (`seconds`): the name must end in `_<unit>`. */
  unit?: string
  samples: MetricSample[]
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/

/** A name made valid for a metric or label: every other character becomes `_`, and a leading digit gets one before it. */
export function metricName(text: string): string {
  const replaced = text.replaceAll(/[^a-zA-Z0-9_]/g, '_')
  return /^[0-9]/.test(replaced) || replaced === '' ? `_${replaced}` : replaced
}

/** A label value between its double quotes: backslash, double quote and line feed escaped (both formats). */
export function escapeLabelValue(value: string): string {
  return value.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')
}

/** HELP text: one line, escaped as the format wants it. */
export function escapeHelp(text: string, format: ExpositionFormat): string {
  const escaped = text.replaceAll('\\', '\\\\').replaceAll('\n', '\\n')
  return format === 'openmetrics' ? escaped.replaceAll('"', '\\"') : escaped
}

/** A sample value as both formats spell it: integers plainly, NaN and the infinities by name. */
export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN'
  if (value === Number.POSITIVE_INFINITY) return '+Inf'
  if (value === Number.NEGATIVE_INFINITY) return '-Inf'
  return String(value)
}

/**
 * The exposition of these families, in their order; families without samples are left out.
 * Throws (a bug in a mapping, not an operator's error) on an invalid or repeated name, or two
 * samples of one family with the same labels: scrapers reject the whole text for either.
 */
export function renderExposition(families: MetricFamily[], format: ExpositionFormat): string {
  const lines: string[] = []
  const seen = new Set<string>()
  for (const family of families) {
    if (family.samples.length === 0) continue
    if (!METRIC_NAME.test(family.name)) throw new Error(`invalid metric name ${JSON.stringify(family.name)}`)
    if (seen.has(family.name)) throw new Error(`metric family ${family.name} written twice`)
    seen.add(family.name)
    if (family.unit !== undefined && !family.name.endsWith(`_${family.unit}`)) throw new Error(`metric ${family.name} does not end in its unit _${family.unit}`)
    lines.push(`# HELP ${family.name} ${escapeHelp(family.help, format)}`, `# TYPE ${family.name} ${family.type}`)
    if (family.unit !== undefined && format === 'openmetrics') lines.push(`# UNIT ${family.name} ${family.unit}`)
    const series = new Set<string>()
    for (const sample of family.samples) {
      const labels = renderLabels(family.name, sample.labels)
      if (series.has(labels)) throw new Error(`metric ${family.name} has two samples with the labels ${labels}`)
      series.add(labels)
      lines.push(`${family.name}${labels} ${formatValue(sample.value)}`)
    }
  }
  if (format === 'openmetrics') lines.push('# EOF')
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`
}

/** The exposition on stdout (a reader that went away ends the run quietly, as for every listing). */
export async function writeExposition(families: MetricFamily[], format: ExpositionFormat): Promise<void> {
  const out = new OutputWriter()
  out.write(renderExposition(families, format))
  await out.flush()
}

function renderLabels(metric: string, labels: Record<string, string>): string {
  const pairs = Object.entries(labels).map(([name, value]) => {
    if (!LABEL_NAME.test(name) || name.startsWith('__')) throw new Error(`invalid label name ${JSON.stringify(name)} on ${metric}`)
    return `${name}="${escapeLabelValue(value)}"`
  })
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`
}
