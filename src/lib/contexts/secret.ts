/**
 * A context's password: never stored, only referenced (an environment variable or a file), and
 * put into the broker URL (`scheme://user:PASSWORD@host…`) when the context is used.
 */
import {readBoundedText} from '../cli/bounded-file.js'

import {redactUrl} from '../brokers/shared/redact.js'
import {UsageError} from '../errors.js'
import type {PasswordRef} from './store.js'

/** True when the URL carries anything bq would mask when printing it: a password, token or key. */
export function holdsSecret(url: string): boolean {
  return redactUrl(url) !== url
}

/** `scheme://`, the userinfo before `@` (if any), and the rest (host, path, query). */
function splitAuthority(url: string): {scheme: string; user: string; rest: string} | undefined {
  const match = /^([a-z][a-z0-9+.-]*:\/\/)([^/?#]*)(.*)$/is.exec(url)
  if (!match) return undefined
  const authority = match[2]
  const at = authority.lastIndexOf('@')
  return {scheme: match[1], user: at === -1 ? '' : authority.slice(0, at), rest: authority.slice(at + 1) + match[3]}
}

/** Only `scheme://[user@]host…` URLs have a place for a password; a connection string does not. */
export function takesPassword(url: string): boolean {
  return splitAuthority(url) !== undefined
}

/** The URL with `password` in its userinfo (percent-encoded): `redis://host` → `redis://:pw@host`. */
export function withPassword(url: string, password: string): string {
  const parts = splitAuthority(url)
  if (parts === undefined) throw new UsageError(`${redactUrl(url)} has no place for a password (expected scheme://user@host…)`)
  return `${parts.scheme}${parts.user}:${encodeURIComponent(password)}@${parts.rest}`
}

/** Reads the referenced password now; a missing variable or file is a one-line usage error (exit 2). */
export function readPassword(context: string, ref: PasswordRef, env: NodeJS.ProcessEnv = process.env): string {
  if ('env' in ref) {
    const value = env[ref.env]
    if (value === undefined || value === '') throw new UsageError(`context ${context}: its password variable $${ref.env} is not set (or empty); export it, or re-add the context with another --password-env/--password-file`)
    return value
  }
  const text = readBoundedText(ref.file, 'password file', {what: 'its password file', prefix: `context ${context}: `})
  // Files written by `echo` end with a newline that is not part of the password.
  const password = text.replace(/\r?\n$/, '')
  if (password === '') throw new UsageError(`context ${context}: its password file ${ref.file} is empty`)
  return password
}

export function describePasswordRef(ref: PasswordRef | undefined): string {
  if (ref === undefined) return 'none'
  return 'env' in ref ? `$${ref.env}` : `file ${ref.file}`
}
