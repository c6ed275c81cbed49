import {visible} from './control-chars.js'
import {isTerminal} from './style.js'

/**
 * Tabular output: on a terminal, a table (cli-table3, loaded only then) with no rules between
 * rows, fitted to the terminal's width by truncating the widest column with an ellipsis; when
 * piped, pure tab-separated lines with a header row, so `bq peek orders | cut -f2` works.
 */
export async function renderTable(head: string[], rows: string[][]): Promise<string> {
  if (!isTerminal()) return [head, ...rows].map(tsvRow).join('\n')
  const [{default: Table}, {fitColumns}] = await Promise.all([import('cli-table3'), import('./fit-columns.js')])
  // A cell's control characters would reach the terminal as they are.
  head = head.map(visible)
  rows = rows.map((row) => row.map(visible))
  const colWidths = fitColumns([head, ...rows], terminalColumns())
  const table = new Table({
    head,
    chars: ROWS_WITHOUT_RULES,
    ...(colWidths === undefined ? {} : {colWidths}),
    style: {head: process.env.NO_COLOR === undefined ? ['cyan'] : [], border: []},
  })
  table.push(...rows)
  return table.toString()
}

/** One TSV line: a tab or newline inside a cell would break the columns; other control characters are escaped. */
export function tsvRow(row: string[]): string {
  return row.map((cell) => visible(cell.replace(/[\t\r\n]/g, ' '))).join('\t')
}

/** cli-table3 draws a rule between every two rows by default; only the frame stays. */
const ROWS_WITHOUT_RULES = {'mid': '', 'left-mid': '', 'mid-mid': '', 'right-mid': ''}

/** The terminal's width: the tty's own, else $COLUMNS (a pseudo-terminal without a size), else unknown. */
export function terminalColumns(stream: NodeJS.WriteStream = process.stdout): number | undefined {
  if (stream.columns) return stream.columns
  const env = Number(process.env.COLUMNS)
  return Number.isInteger(env) && env > 0 ? env : undefined
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

/** ISO-8601 UTC with milliseconds: the one time format of bq's JSON. */
export function isoTime(ms: number | undefined): string | undefined {
  return ms === undefined || !Number.isFinite(ms) ? undefined : new Date(ms).toISOString()
}
