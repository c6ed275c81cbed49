/** Types for parse-prometheus-text-format (it ships none): the shapes its README documents, for gauges. */
declare module 'parse-prometheus-text-format' {
  export interface ParsedSample {
    /** The value as written (a string: `4`, `1.5`, `NaN`, `+Inf`). */
    value: string
    labels?: Record<string, string>
    timestamp_ms?: string
  }

  export interface ParsedFamily {
    name: string
    help: string
    /** Upper case: GAUGE, COUNTER, UNTYPED, … */
    type: string
    metrics: ParsedSample[]
  }

  export default function parsePrometheusTextFormat(text: string): ParsedFamily[]
}
