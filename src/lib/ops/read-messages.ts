import {createReadStream, statSync} from 'node:fs'
import {isUtf8} from 'node:buffer'
import {extname} from 'node:path'
import type {Readable} from 'node:stream'

/**
 * Streams message texts out of a file or stdin. A file holds either one JSON document (possibly
 * pretty-printed) or JSONL (one message per line). Lines are split on raw bytes, so memory
 * stays bounded by the longest line, whatever the file size.
 */

export interface MessageText {
  source: string
  /** 1-based line where the message starts. */
  line: number
  /** The message text; undefined when it could not be read (see `readError`). */
  text?: string
  /** Why this message or file could not be read (encoding, size, I/O). */
  readError?: {code: string; message: string}
  /** Set on the first message when the file started with a UTF-8 byte order mark. */
  bom?: boolean
}

/**
 * The largest message bq reads from a file or stdin (one JSONL line, or a whole one-document
 * file). Above it the input is refused with its position, and the rest is not read: memory stays
 * bounded (about four times this) and an endless input such as /dev/zero ends at once.
 */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024
const MAX_MESSAGE_MIB = MAX_MESSAGE_BYTES / 1024 / 1024
/** How much of a JSONL chunk is decoded at once (see pushLines). */
const DECODE_PIECE = 64 * 1024

/** Called synchronously for each message; `afterChunk` is where callers wait (e.g. for output to drain). */
export type OnMessage = (message: MessageText) => void

/** Reads `path` (or stdin for `-`) and calls `onMessage` for each message, in order. */
export async function readMessages(path: string, onMessage: OnMessage, options: {afterChunk?: () => Promise<void>; stdin?: Readable} = {}): Promise<void> {
  const source = path === '-' ? '<stdin>' : path
  let stream: Readable
  if (path === '-') {
    stream = options.stdin ?? process.stdin
  } else {
    try {
      const stats = statSync(path)
      if (stats.isDirectory()) {
        onMessage({source, line: 0, readError: {code: 'input.directory', message: 'is a directory'}})
        return
      }
      // Opening a FIFO nobody writes to (or a socket) blocks for ever; stdin is what `-` is for.
      if (stats.isFIFO() || stats.isSocket()) {
        onMessage({source, line: 0, readError: {code: 'input.not_regular', message: `is a ${stats.isFIFO() ? 'FIFO (named pipe)' : 'socket'}, not a regular file (use - to read stdin)`}})
        return
      }
    } catch (error) {
      onMessage({source, line: 0, readError: ioError(error)})
      return
    }
    stream = createReadStream(path, {highWaterMark: 1024 * 1024})
  }
  const forceLines = ['.jsonl', '.ndjson'].includes(extname(path).toLowerCase())
  const splitter = new MessageSplitter(source, forceLines, onMessage)
  try {
    for await (const chunk of stream) {
      splitter.push(chunk as Buffer)
      if (splitter.refused) break
      await options.afterChunk?.()
    }
    if (splitter.refused) stream.destroy()
    else splitter.end()
  } catch (error) {
    onMessage({source, line: splitter.currentLine, readError: ioError(error)})
  }
}

function ioError(error: unknown): {code: string; message: string} {
  const code = (error as NodeJS.ErrnoException).code
  const reasons: Record<string, string> = {ENOENT: 'no such file', EACCES: 'permission denied', EISDIR: 'is a directory'}
  return {code: 'input.unreadable', message: `cannot read: ${(code && reasons[code]) ?? (error as Error).message}`}
}

type Mode = 'undecided' | 'lines' | 'document'

/** Splits a byte stream into messages, deciding between JSONL and one document on the first line. */
class MessageSplitter {
  currentLine = 0
  /** Set once a message over MAX_MESSAGE_BYTES was reported: the rest of the input is not read. */
  refused = false
  private mode: Mode
  private pending: Buffer[] = []
  private pendingBytes = 0
  private documentParts: Buffer[] = []
  private documentBytes = 0
  private documentStart = 0
  private bomChecked = false
  private bom = false
  private sawAny = false

  constructor(
    private readonly source: string,
    forceLines: boolean,
    private readonly onMessage: OnMessage,
  ) {
    this.mode = forceLines ? 'lines' : 'undecided'
  }

  push(chunk: Buffer): void {
    if (!this.bomChecked) {
      this.bomChecked = true
      if (chunk.length >= 3 && chunk[0] === 0xef && chunk[1] === 0xbb && chunk[2] === 0xbf) {
        this.bom = true
        chunk = chunk.subarray(3)
      }
    }
    if (this.refused) return
    if (this.mode === 'document') return this.addToDocument(chunk)
    if (this.mode === 'lines') return this.pushLines(chunk)
    this.pushBytes(chunk)
  }

  /**
   * The JSONL fast path: the chunk's complete lines are decoded with one toString and split as a
   * string, instead of one Buffer view and one decode per line. Input with invalid UTF-8 (the
   * decoder's U+FFFD appears) goes through the byte path, which reports the exact lines.
   */
  private pushLines(chunk: Buffer): void {
    const lastNewline = chunk.lastIndexOf(10)
    if (lastNewline === -1) return this.keepPartial(chunk)
    let from = 0
    if (this.pending.length > 0) {
      // Finish the line the previous chunk started on its own, so the rest needs no copy.
      from = chunk.indexOf(10) + 1
      this.pushBytes(chunk.subarray(0, from))
    }
    // Decoded in pieces of about 64 KiB cut at newlines: V8 makes a string of a few hundred KiB or
    // more in its large-object space, and decoding a 1 MiB chunk at once was 25× slower per byte
    // (100 ms of a 100,000-line validate, against 4 ms in pieces).
    while (from <= lastNewline) {
      const end = from + DECODE_PIECE > lastNewline ? lastNewline : chunk.indexOf(10, from + DECODE_PIECE)
      this.pushLineRun(chunk.subarray(from, end + 1))
      from = end + 1
    }
    if (lastNewline + 1 < chunk.length) this.keepPartial(chunk.subarray(lastNewline + 1))
  }

  /** Complete lines (ending with a newline): one decode, then split as a string. */
  private pushLineRun(complete: Buffer): void {
    const text = complete.toString('utf8')
    if (text.includes('\uFFFD')) this.pushBytes(complete)
    else this.splitText(text)
  }

  /** Emits each line of `text`, which ends with a newline. */
  private splitText(text: string): void {
    let start = 0
    for (let newline = text.indexOf('\n'); newline !== -1; newline = text.indexOf('\n', start)) {
      const end = newline > start && text.charCodeAt(newline - 1) === 13 ? newline - 1 : newline
      const line = text.slice(start, end)
      start = newline + 1
      this.currentLine++
      if (isBlankText(line)) continue
      this.sawAny = true
      this.emit({source: this.source, line: this.currentLine, text: line})
    }
  }

  /** The general path: splits on raw bytes (first line, documents, invalid UTF-8). */
  private pushBytes(chunk: Buffer): void {
    let start = 0
    while (start < chunk.length) {
      const newline = chunk.indexOf(10, start)
      if (newline === -1) {
        this.keepPartial(chunk.subarray(start))
        return
      }
      const piece = chunk.subarray(start, newline)
      start = newline + 1
      let line: Buffer
      if (this.pending.length > 0) {
        this.pending.push(piece)
        line = Buffer.concat(this.pending)
        this.pending = []
        this.pendingBytes = 0
      } else {
        line = piece
      }
      this.line(line, true)
      if (this.refused) return
      if ((this.mode as Mode) === 'document') {
        // The rest of this chunk belongs to the document too.
        this.addToDocument(chunk.subarray(start))
        return
      }
    }
  }

  end(): void {
    if (this.mode === 'document') return this.finishDocument()
    if (this.pending.length > 0) {
      const line = Buffer.concat(this.pending)
      this.pending = []
      this.line(line, false)
      if ((this.mode as Mode) === 'document') return this.finishDocument()
    }
    if (!this.sawAny) {
      this.onMessage({source: this.source, line: this.currentLine || 1, readError: {code: 'input.empty', message: 'empty input: no message found'}})
    }
  }

  private keepPartial(piece: Buffer) {
    if (this.refused) return
    this.pendingBytes += piece.length
    if (this.pendingBytes > MAX_MESSAGE_BYTES) {
      this.pending = []
      this.refuse(this.currentLine + 1, 'input.line_too_long', `line is longer than ${MAX_MESSAGE_MIB} MiB (bq's largest message); the rest of the input was not read`)
      return
    }
    this.pending.push(Buffer.from(piece))
  }

  /** Reports a message over the size limit and stops reading. */
  private refuse(line: number, code: string, message: string): void {
    this.refused = true
    this.sawAny = true
    this.emit({source: this.source, line, readError: {code, message}})
  }

  private line(raw: Buffer, terminated: boolean): void {
    this.currentLine++
    const lineNumber = this.currentLine
    let end = raw.length
    if (end > 0 && raw[end - 1] === 13) end--
    const bytes = raw.subarray(0, end)
    if (isBlank(bytes)) return
    if (this.mode === 'undecided') {
      this.mode = looksLikeCompleteLine(bytes) ? 'lines' : 'document'
      if (this.mode === 'document') {
        this.documentStart = lineNumber
        this.addToDocument(raw)
        if (terminated) this.addToDocument(Buffer.from('\n'))
        return
      }
    }
    this.sawAny = true
    // Decoding replaces invalid bytes with U+FFFD; only then is the (slower) full check needed.
    const text = bytes.toString('utf8')
    if (text.includes('\uFFFD') && !isUtf8(bytes)) {
      this.emit({source: this.source, line: lineNumber, readError: {code: 'encoding.not_utf8', message: 'not valid UTF-8'}})
      return
    }
    this.emit({source: this.source, line: lineNumber, text})
  }

  private addToDocument(chunk: Buffer) {
    if (this.refused) return
    this.documentBytes += chunk.length
    if (this.documentBytes > MAX_MESSAGE_BYTES) {
      this.documentParts = []
      this.refuse(this.documentStart || 1, 'input.too_large', `a JSON document larger than ${MAX_MESSAGE_MIB} MiB (bq's largest message); the rest of the input was not read`)
      return
    }
    this.documentParts.push(Buffer.from(chunk))
  }

  private finishDocument(): void {
    this.sawAny = true
    const line = this.documentStart || 1
    // The file's final line break is the file's, not the message's.
    let bytes = Buffer.concat(this.documentParts)
    let end = bytes.length
    while (end > 0 && (bytes[end - 1] === 10 || bytes[end - 1] === 13)) end--
    bytes = bytes.subarray(0, end)
    this.documentParts = []
    if (!isUtf8(bytes)) {
      this.emit({source: this.source, line, readError: {code: 'encoding.not_utf8', message: 'not valid UTF-8'}})
      return
    }
    this.emit({source: this.source, line, text: bytes.toString('utf8')})
  }

  private emit(message: MessageText): void {
    if (this.bom) {
      message.bom = true
      this.bom = false
    }
    this.onMessage(message)
  }
}

/** Spaces, tabs and carriage returns only (what isBlank accepts, on text). */
function isBlankText(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i)
    if (c !== 32 && c !== 9 && c !== 13) return false
  }
  return true
}

function isBlank(bytes: Buffer): boolean {
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]
    if (c !== 32 && c !== 9 && c !== 13) return false
  }
  return true
}

/**
 * Decides JSONL on the first non-blank line: a line that holds a whole JSON value, or that
 * looks like a whole object ('{' ... '}') but is broken, is a JSONL line; anything else (such
 * as a lone '{' opening a pretty-printed document) starts a single document.
 */
function looksLikeCompleteLine(bytes: Buffer): boolean {
  const text = bytes.toString('utf8').trim()
  if (text.startsWith('{') && text.endsWith('}')) return true
  if (!text.startsWith('{') && !text.startsWith('[')) return true
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

/** Size of a file in bytes, or undefined (for progress displays). */
export function fileSize(path: string): number | undefined {
  try {
    return statSync(path).size
  } catch {
    return undefined
  }
}
