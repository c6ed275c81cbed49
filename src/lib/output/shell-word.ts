/**
 * A word as a POSIX shell reads it back unchanged: bare when it is safe, else single-quoted. A word
 * holding control characters (a newline, ESC from a hostile queue name) is written `$'…'` with
 * escapes, so the printed line never carries a raw control byte to the terminal.
 */
export function shellWord(word: string): string {
  if (/^[\w@%+=:,./-]+$/.test(word)) return word
  // eslint-disable-next-line no-control-regex -- control characters are what this looks for
  if (!/[\u0000-\u001F\u007F]/.test(word)) return `'${word.replaceAll("'", "'\\''")}'`
  // eslint-disable-next-line no-control-regex -- the same
  const escaped = word.replace(/[\\'\u0000-\u001F\u007F]/g, (c) => (c === '\\' || c === "'" ? `\\${c}` : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`))
  return `$'${escaped}'`
}

/** Words joined into a line a POSIX shell reads back as those words. */
export function shellLine(words: string[]): string {
  return words.map(shellWord).join(' ')
}

/** The `bq dlq recover` line for a DLQ, as the operator named it, ready to paste. */
export function recoverCommand(queue: string, dlq: string | undefined): string {
  return shellLine(['bq', 'dlq', 'recover', queue, ...(dlq === undefined ? [] : ['--dlq', dlq])])
}
