import {isTerminal} from './style.js'

/**
 * Tabular output: a boxed table on a terminal (cli-table3, loaded only then), tab-separated
 * lines with a header row when piped, so `bq peek orders | cut -f2` works.
 */
export async function renderTable(head: string[], rows: string[][]): Promise<string> {
  if (!isTerminal()) return [head, ...rows].map((row) => row.map((cell) => cell.replace(/[\t\n]/g, ' ')).join('\t')).join('\n')
  const {default: Table} = await import('cli-table3')
  const table = new Table({head, style: {head: process.env.NO_COLOR === undefined ? ['cyan'] : [], border: []}})
  table.push(...rows)
  return table.toString()
}

/** Short human age: 42s, 5m, 3h, 2d. */
export function formatAge(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '-'
  const s = Math.max(0, Math.round(ms / 1000))
  if (s < 120) return `${s}s`
  if (s < 7200) return `${Math.round(s / 60)}m`
  if (s < 172800) return `${Math.round(s / 3600)}h`
  return `${Math.round(s / 86400)}d`
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`
}

export function isoTime(ms: number | undefined): string | undefined {
  return ms === undefined || !Number.isFinite(ms) ? undefined : new Date(ms).toISOString()
}
