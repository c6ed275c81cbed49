import {accessSync, closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats} from 'node:fs'

import {UsageError} from '../errors.js'

/**
 * The one way bq reads a whole file the user names (a registry and its schemas, a `--patch`, the
 * contexts file and a context's password file, a broker URL's `ca=`/`cert=`/`key=`, `schema compat`
 * inputs, a `dlq edit` buffer, `schema gdpr --mask`). `/dev/zero`, a FIFO nobody writes to or a
 * runaway file must end at once with one line (exit 2), never a hang or all memory:
 *
 * - the path is stat'ed first (stat never opens, so a FIFO cannot block it) and anything but a
 *   regular file is refused: a directory with its own line, devices, FIFOs and sockets with another;
 * - a regular file above its kind's cap (FILE_CAPS, documented in docs/limits.md) is refused;
 * - the file is opened with O_NONBLOCK (a FIFO swapped in after the stat cannot block either),
 *   checked again on the open descriptor, and read once, never past the cap.
 *
 * Inputs that are streamed message by message (replay, purge backups, validate) are not read
 * whole: `requireReadableFile` only refuses what cannot be read at all before anything starts.
 */

const KiB = 1024
const MiB = 1024 * KiB

/** The largest file bq reads whole, per kind. */
export const FILE_CAPS = {
  certificate: 1 * MiB,
  key: 1 * MiB,
  patch: 1 * MiB,
  contexts: 1 * MiB,
  'password file': 1 * MiB,
  schema: 16 * MiB,
  'compat input': 16 * MiB,
  message: 16 * MiB,
  'edit buffer': 16 * MiB,
  registry: 64 * MiB,
} as const

export type FileKind = keyof typeof FILE_CAPS

export interface BoundedReadOptions {
  /** What the file is to the user, in errors (default: the kind), e.g. `old schema`. */
  what?: string
  /** How the file is named in errors after `what` (default: its path; '' for none, when `what` names it). */
  label?: string
  /** Put before every error line, e.g. the broker URL (redacted) the file belongs to. */
  prefix?: string
  /** The error's stable code for every refusal (default: `input.unreadable`, `input.directory`, `input.not_regular` or `input.too_large`). */
  code?: string
}

/** A file bq refused to read: a UsageError (exit 2) that also says why on its own (`reason`) and the errno, if any. */
export class FileRefusedError extends UsageError {
  constructor(
    message: string,
    code: string,
    /** The reason alone, without the file's name (for callers that report it their own way). */
    readonly reason: string,
    readonly errno?: string,
  ) {
    super(message, code)
    this.name = 'FileRefusedError'
  }
}

/** `1 MiB`, `16 MiB`, `512 KiB`, `3 bytes`. */
export function formatSize(bytes: number): string {
  if (bytes >= MiB) return `${Number.isInteger(bytes / MiB) ? bytes / MiB : (bytes / MiB).toFixed(1)} MiB`
  if (bytes >= KiB) return `${Number.isInteger(bytes / KiB) ? bytes / KiB : (bytes / KiB).toFixed(1)} KiB`
  return `${bytes} byte${bytes === 1 ? '' : 's'}`
}

/** What a non-regular file is, in words. */
function typeOf(stats: Stats): string {
  if (stats.isCharacterDevice()) return 'a character device'
  if (stats.isBlockDevice()) return 'a block device'
  if (stats.isFIFO()) return 'a FIFO (named pipe)'
  if (stats.isSocket()) return 'a socket'
  return 'not a regular file'
}

function errnoReason(error: unknown): {reason: string; errno?: string} {
  const errno = (error as NodeJS.ErrnoException).code
  const reasons: Record<string, string> = {ENOENT: 'no such file', EACCES: 'permission denied', EISDIR: 'it is a directory', ELOOP: 'too many symbolic links', ENOTDIR: 'a part of the path is not a directory'}
  return {reason: (errno && reasons[errno]) ?? (error as Error).message, errno}
}

/** Throws unless `stats` is a regular file within `kind`'s cap. */
function checkStats(stats: Stats, subject: string, kind: FileKind, prefix: string, code?: string): void {
  if (stats.isDirectory()) throw new FileRefusedError(`${prefix}cannot read ${subject}: it is a directory`, code ?? 'input.directory', 'it is a directory')
  if (!stats.isFile()) {
    const reason = `it is ${typeOf(stats)}, not a regular file`
    throw new FileRefusedError(`${prefix}cannot read ${subject}: ${reason}`, code ?? 'input.not_regular', reason)
  }
  const cap = FILE_CAPS[kind]
  if (stats.size > cap) tooLarge(stats.size, subject, kind, prefix, code)
}

function tooLarge(size: number | undefined, subject: string, kind: FileKind, prefix: string, code?: string): never {
  const cap = formatSize(FILE_CAPS[kind])
  const reason = size === undefined ? `it is larger than the ${cap} cap for a ${kind}` : `it is ${formatSize(size)}, above the ${cap} cap for a ${kind}`
  throw new FileRefusedError(`${prefix}cannot read ${subject}: ${reason} (docs/limits.md)`, code ?? 'input.too_large', reason)
}

let scratch: Buffer | undefined

/** Reads the whole of `path` as bytes, bounded by `kind`'s cap; FileRefusedError (exit 2) otherwise. */
export function readBoundedFile(path: string, kind: FileKind, options: BoundedReadOptions = {}): Buffer {
  const name = options.label ?? path
  const prefix = options.prefix ?? ''
  const what = options.what ?? kind
  const subject = name === '' ? what : `${what} ${name}`
  const unreadable = (error: unknown): never => {
    const {reason, errno} = errnoReason(error)
    throw new FileRefusedError(`${prefix}cannot read ${subject}: ${reason}`, options.code ?? (errno === 'EISDIR' ? 'input.directory' : 'input.unreadable'), reason, errno)
  }
  let stats: Stats
  try {
    stats = statSync(path)
  } catch (error) {
    return unreadable(error)
  }
  checkStats(stats, subject, kind, prefix, options.code)
  let fd: number
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK)
  } catch (error) {
    return unreadable(error)
  }
  try {
    // The path may have been replaced since the stat: what counts is what was opened.
    checkStats(fstatSync(fd), subject, kind, prefix, options.code)
    const cap = FILE_CAPS[kind]
    const chunks: Buffer[] = []
    let total = 0
    // The first read asks for the size stat gave, plus one byte to see the end; the reads after it
    // (the end's confirmation, a file that grew) go through one reused buffer, so that a small file
    // costs one allocation of its size, not 64 KiB of garbage.
    let first = true
    for (;;) {
      const room = cap + 1 - total
      const chunk = first ? Buffer.allocUnsafe(Math.min(Math.min(stats.size, cap) + 1, room)) : (scratch ??= Buffer.allocUnsafe(64 * KiB)).subarray(0, Math.min(64 * KiB, room))
      let read: number
      try {
        read = readSync(fd, chunk, 0, chunk.length, null)
      } catch (error) {
        return unreadable(error)
      }
      if (read === 0) break
      chunks.push(first ? (read === chunk.length ? chunk : chunk.subarray(0, read)) : Buffer.from(chunk.subarray(0, read)))
      first = false
      total += read
      // The file grew past its cap while being read.
      if (total > cap) tooLarge(undefined, subject, kind, prefix, options.code)
    }
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total)
  } finally {
    closeSync(fd)
  }
}

/** readBoundedFile as UTF-8 text. */
export function readBoundedText(path: string, kind: FileKind, options: BoundedReadOptions = {}): string {
  return readBoundedFile(path, kind, options).toString('utf8')
}

/**
 * For inputs streamed message by message (replay's file, a purge backup): refuses, before any
 * broker is opened or anything asked, a file that cannot be read at all (missing, a directory, no
 * permission) or is not a regular file (a device such as /dev/zero, a FIFO, a socket): a usage
 * error (exit 2), not a run of one "poison" line. `-` (stdin) is not checked here.
 */
export function requireReadableFile(file: string, what = 'input'): void {
  if (file === '-') return
  let stats: Stats
  try {
    stats = statSync(file)
    accessSync(file, constants.R_OK)
  } catch (error) {
    throw new FileRefusedError(`cannot read ${what} ${file}: ${errnoReason(error).reason}; nothing was changed`, 'input.unreadable', errnoReason(error).reason, errnoReason(error).errno)
  }
  if (stats.isDirectory()) throw new FileRefusedError(`cannot read ${what} ${file}: it is a directory; nothing was changed`, 'input.unreadable', 'it is a directory')
  if (!stats.isFile()) {
    const reason = `it is ${typeOf(stats)}, not a regular file (use - to read stdin)`
    throw new FileRefusedError(`cannot read ${what} ${file}: ${reason}; nothing was changed`, 'input.not_regular', reason)
  }
}
