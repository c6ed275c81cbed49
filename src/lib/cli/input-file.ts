import {accessSync, constants, statSync} from 'node:fs'

import {UsageError} from '../errors.js'

/**
 * Refuses, before any broker is opened or anything asked, an input file that cannot be read at all
 * (missing, a directory, no permission): a usage error (exit 2), not a run of one "poison" line.
 * `-` (stdin) is not checked here.
 */
export function requireReadableFile(file: string, what = 'input'): void {
  if (file === '-') return
  try {
    if (statSync(file).isDirectory()) throw new UsageError(`cannot read ${what} ${file}: it is a directory; nothing was changed`, 'input.unreadable')
    accessSync(file, constants.R_OK)
  } catch (error) {
    if (error instanceof UsageError) throw error
    const code = (error as NodeJS.ErrnoException).code
    const reason = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : (error as Error).message
    throw new UsageError(`cannot read ${what} ${file}: ${reason}; nothing was changed`, 'input.unreadable')
  }
}
