/**
 * Text from a broker (queue names, bodies, a server's message) on a line meant for a person: its
 * control characters are shown as escapes (`\n`, `\x1b`, `\0`, `\u009b`), so a hostile name cannot
 * move the cursor, recolour the terminal, hide text or break one line (or one TSV row) into two.
 */

// eslint-disable-next-line no-control-regex -- control characters (C0, DEL, C1) are what this finds
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/g
const NAMED: Record<string, string> = {'\n': '\\n', '\r': '\\r', '\t': '\\t', '\0': '\\0'}

function escapeOne(c: string): string {
  const code = c.charCodeAt(0)
  return NAMED[c] ?? (code <= 0xff && code < 0x80 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`)
}

/** One line: every control character escaped, newlines and tabs included. */
export function visible(text: string): string {
  return text.replace(CONTROL, escapeOne)
}
