import {createReadStream, statSync} from 'node:fs'
import type {Readable} from 'node:stream'

import {UsageError} from '../errors.js'
import {MAX_MESSAGE_BYTES} from '../ops/read-messages.js'

/**
 * Reads a whole input as bytes, refusing it past `limit` bytes: `/dev/zero` or a runaway pipe must
 * end with an error, not take all memory. `what` names the input in the error.
 */
async function readBounded(input: Readable, what: string, limit: number): Promise<Buffer> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of input) {
    size += (chunk as Buffer).length
    if (size > limit) {
      input.destroy()
      throw new UsageError(`${what} is larger than ${limit / 1024 / 1024} MiB (bq's largest message): nothing was published`, 'input.too_large')
    }
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks)
}

/** Reads all of stdin, as bytes, when it is a pipe or file; undefined on a terminal (nothing to read). */
export async function readStdinIfPiped(limit = MAX_MESSAGE_BYTES): Promise<Buffer | undefined> {
  if (process.stdin.isTTY) return undefined
  try {
    return await readBounded(process.stdin, 'stdin', limit)
  } catch (error) {
    if (error instanceof UsageError) throw error
    // A closed stdin (`<&-`) cannot be read at all: one line, not a stack.
    throw new UsageError(`cannot read stdin: ${(error as NodeJS.ErrnoException).code === 'EBADF' ? 'it is closed' : (error as Error).message}; nothing was published`, 'input.unreadable')
  }
}

/** Reads a file named on the command line (`--data-file`), bounded like stdin. */
export async function readInputFile(file: string, flag: string, limit = MAX_MESSAGE_BYTES): Promise<Buffer> {
  try {
    // Opening a FIFO nobody writes to (or a socket) blocks for ever; a device such as /dev/zero
    // is read, up to the limit.
    const stats = statSync(file)
    if (stats.isFIFO() || stats.isSocket()) throw new UsageError(`cannot read ${flag} ${file}: it is a ${stats.isFIFO() ? 'FIFO (named pipe)' : 'socket'}, not a regular file (pipe the data to stdin instead); nothing was published`, 'input.not_regular')
    return await readBounded(createReadStream(file), `${flag} ${file}`, limit)
  } catch (error) {
    if (error instanceof UsageError) throw error
    const code = (error as NodeJS.ErrnoException).code
    throw new UsageError(`cannot read ${flag} ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'it is a directory' : (error as Error).message}`)
  }
}
