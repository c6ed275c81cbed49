import {UsageError} from '../../errors.js'
import {redactUrl} from '../shared/redact.js'

/** `sqlite://PATH`: everything after the scheme is the file path, verbatim. */
export function sqlitePath(url: string, displayUrl = redactUrl(url)): string {
  const path = url.replace(/^sqlite:\/\//i, '')
  if (path === '') throw new UsageError(`${displayUrl} names no database file: use sqlite:///absolute/path.db or sqlite://relative/path.db`)
  return path
}
