/** A word as a POSIX shell reads it back unchanged: bare when it is safe, else single-quoted. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", "'\\''")}'`
}

/** The `bq dlq recover` line for a DLQ, as the operator named it, ready to paste. */
export function recoverCommand(queue: string, dlq: string | undefined): string {
  return ['bq', 'dlq', 'recover', queue, ...(dlq === undefined ? [] : ['--dlq', dlq])].map(shellWord).join(' ')
}
