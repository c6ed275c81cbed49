import stringWidth from 'string-width'

/**
 * Column widths (cli-table3's colWidths, padding included) that fit a table into `columns`
 * terminal cells, or undefined when it fits as it is (or the width is unknown). Like gh, the
 * widest column gives way first, down to a few cells; cli-table3 then truncates its cells with
 * an ellipsis. string-width counts what a cell takes on screen (wide characters, no ANSI codes).
 */
const PADDING = 2
const NARROWEST = 6

export function fitColumns(rows: string[][], columns: number | undefined): number[] | undefined {
  if (columns === undefined || rows.length === 0) return undefined
  const count = Math.max(...rows.map((row) => row.length))
  const widths = Array.from({length: count}, (_, i) => Math.max(1, ...rows.map((row) => stringWidth(row[i] ?? ''))) + PADDING)
  // A frame: one border before each column and one after the last.
  const total = () => widths.reduce((sum, w) => sum + w, 0) + count + 1
  if (total() <= columns) return undefined
  while (total() > columns) {
    const widest = Math.max(...widths)
    if (widest <= NARROWEST) break
    const index = widths.indexOf(widest)
    const next = Math.max(NARROWEST, ...widths.filter((_, i) => i !== index))
    // Shrink the widest to what fits, not below the next widest: on a tie they give way together.
    if (next < widest) widths[index] = Math.max(next, widest - (total() - columns))
    else for (let i = 0; i < count; i++) if (widths[i] === widest) widths[i]--
  }
  return widths
}
