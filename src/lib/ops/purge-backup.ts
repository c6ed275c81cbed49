import {closeSync, fsyncSync, openSync, writeSync} from 'node:fs'
import {dirname} from 'node:path'

import {UsageError, describeError} from '../errors.js'

/**
 * The backup file of `bq dlq purge`: export lines (export-line.ts) appended batch by batch, each
 * batch written and fsynced before any of its messages is deleted, so a purge killed at any
 * moment has every deleted message on disk. Never overwrites: the file must not exist.
 */
export class PurgeBackup {
  private written = 0

  private constructor(
    readonly path: string,
    private fd: number | undefined,
  ) {}

  /** Creates the file (exclusively: an existing one is refused, exit 2) and makes its name durable. */
  static create(path: string): PurgeBackup {
    let fd: number
    try {
      fd = openSync(path, 'wx', 0o600)
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'EEXIST') throw backupExists(path)
      throw new UsageError(`cannot create the backup file ${path}: ${describeError(error)}; nothing was changed`, 'backup-unwritable')
    }
    syncDirectory(dirname(path))
    return new PurgeBackup(path, fd)
  }

  /** How many lines the file holds. */
  get lines(): number {
    return this.written
  }

  /** Appends the lines and fsyncs: when this returns, they are on disk. */
  append(lines: string[]): void {
    if (lines.length === 0) return
    const fd = this.open()
    const text = Buffer.from(lines.join('\n') + '\n', 'utf8')
    let offset = 0
    while (offset < text.length) offset += writeSync(fd, text, offset)
    fsyncSync(fd)
    this.written += lines.length
  }

  /** Closes the file (kept even when empty: its path was printed). */
  close(): void {
    if (this.fd === undefined) return
    closeSync(this.fd)
    this.fd = undefined
  }

  private open(): number {
    if (this.fd === undefined) throw new Error(`backup file ${this.path} is closed`)
    return this.fd
  }
}

/** The refusal of a backup path that exists: exit 2, nothing changed. */
export function backupExists(path: string): UsageError {
  return new UsageError(`backup file ${path} already exists: bq never overwrites one; choose another --backup path; nothing was changed`, 'backup-exists')
}

/** `./<dlq>.purge-<UTC time>.jsonl`, the queue name made safe for a file name (Pulsar topics have slashes). */
export function defaultBackupPath(dlq: string, now = new Date()): string {
  const safe = dlq.replace(/[^\w.-]+/g, '_').replace(/^\.+/, '_')
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('.', '-')
  return `./${safe}.purge-${stamp}.jsonl`
}

/** The new file's name must survive a power cut too: fsync its directory (where the platform allows). */
function syncDirectory(directory: string): void {
  let fd: number | undefined
  try {
    fd = openSync(directory, 'r')
    fsyncSync(fd)
  } catch {
    // Some platforms cannot fsync a directory; the file's own fsync still holds its lines.
  } finally {
    if (fd !== undefined) closeSync(fd)
  }
}
