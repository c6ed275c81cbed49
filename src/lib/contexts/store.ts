/**
 * The contexts file: named brokers an operator picks with `--context NAME`, `BQ_CONTEXT` or
 * `bq context use`. It lives in `$XDG_CONFIG_HOME/bq/contexts.json` (else `~/.config/bq/`), is
 * written with mode 0600 and never holds a secret: a context's password is a reference (an
 * environment variable or a file) that bq reads when the context is used (./secret.ts).
 */
import {chmodSync, mkdirSync, renameSync, writeFileSync} from 'node:fs'
import {homedir} from 'node:os'
import {dirname, isAbsolute, join} from 'node:path'

import {FileRefusedError, readBoundedText} from '../cli/bounded-file.js'
import {UsageError, describeError} from '../errors.js'

/** Where a context's password comes from at use time; never the password itself. */
export type PasswordRef = {env: string} | {file: string}

export interface Context {
  /** The broker URL without its password. */
  broker: string
  /** Destructive commands ask for the queue name, and refuse --yes without --max. */
  protected: boolean
  password?: PasswordRef
  /** The run ledger file for runs through this context (a team's shared one); $BQ_LEDGER wins. */
  ledger?: string
}

export interface ContextStore {
  /** The context `bq context use` picked, if any. */
  current?: string
  contexts: Record<string, Context>
}

/** Letters, digits, `.`, `_` and `-`: a name that is safe in a prompt, a file and a shell. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/** `$XDG_CONFIG_HOME` (only when absolute, as the XDG spec says) or `~/.config`. */
export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME
  if (xdg !== undefined && xdg !== '' && isAbsolute(xdg)) return xdg
  return join(homedir(), '.config')
}

export function contextsPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(configDir(env), 'bq', 'contexts.json')
}

export function checkContextName(name: string): string {
  if (!NAME.test(name)) throw new UsageError(`"${name}" is not a context name: use letters, digits, ".", "_" and "-" (at most 64, starting with a letter or digit)`)
  return name
}

/** The stored contexts; an absent file is an empty store. A damaged one is an error, never silently replaced. */
export function readContexts(env: NodeJS.ProcessEnv = process.env): ContextStore {
  const path = contextsPath(env)
  let text: string
  try {
    text = readBoundedText(path, 'contexts', {what: 'contexts file'})
  } catch (error) {
    if (error instanceof FileRefusedError && error.errno === 'ENOENT') return {contexts: {}}
    throw error
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch (error) {
    throw new UsageError(`${path} is not valid JSON (${describeError(error)}): fix or remove it`)
  }
  return checkStore(parsed, path)
}

/** Writes the store atomically (a temporary file renamed over the old one), mode 0600 in a 0700 directory. */
export function writeContexts(store: ContextStore, env: NodeJS.ProcessEnv = process.env): void {
  const path = contextsPath(env)
  const temporary = `${path}.${process.pid}.tmp`
  try {
    mkdirSync(dirname(path), {recursive: true, mode: 0o700})
    writeFileSync(temporary, `${JSON.stringify({version: 1, ...store}, null, 2)}\n`, {mode: 0o600})
    // The mode given to writeFileSync is filtered by the umask; the file must be 0600 regardless.
    chmodSync(temporary, 0o600)
    renameSync(temporary, path)
  } catch (error) {
    throw new UsageError(`cannot write ${path}: ${describeError(error)}`)
  }
}

/** A hand-edited file is checked as strictly as one bq wrote: a wrong field must not half-work. */
function checkStore(value: unknown, path: string): ContextStore {
  const bad = (what: string) => new UsageError(`${path}: ${what}; fix or remove the file`)
  if (!isObject(value) || !isObject(value.contexts)) throw bad('expected {"contexts": {…}}')
  const contexts: Record<string, Context> = {}
  for (const [name, entry] of Object.entries(value.contexts)) {
    if (!NAME.test(name) || !isObject(entry) || typeof entry.broker !== 'string' || entry.broker === '') throw bad(`context "${name}" needs a broker URL`)
    const password = entry.password
    if (password !== undefined && !(isObject(password) && (typeof password.env === 'string' || typeof password.file === 'string'))) throw bad(`context "${name}": password must be {"env": VAR} or {"file": PATH}`)
    if (entry.ledger !== undefined && (typeof entry.ledger !== 'string' || entry.ledger === '')) throw bad(`context "${name}": ledger must be a file path`)
    contexts[name] = {
      broker: entry.broker,
      protected: entry.protected === true,
      ...(typeof entry.ledger === 'string' ? {ledger: entry.ledger} : {}),
      ...(password === undefined ? {} : {password: typeof password.env === 'string' ? {env: password.env} : {file: password.file as string}}),
    }
  }
  const current = value.current
  if (current !== undefined && typeof current !== 'string') throw bad('"current" must be a context name')
  return {...(current === undefined ? {} : {current}), contexts}
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
