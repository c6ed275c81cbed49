import {createHash} from 'node:crypto'
import {mkdirSync, readFileSync, renameSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {homedir} from 'node:os'
import {dirname, isAbsolute, join} from 'node:path'

/**
 * What `bq schema check` remembers between runs: the schema texts it has proven sound, so that a
 * run over a registry that has not changed skips their proofs ($refs, meta-schema, patterns).
 *
 * - Only "sound" is remembered, with the schema's root `$id` (for the registry-wide `$id` check);
 *   a schema with any problem is checked afresh at every run.
 * - The key is a SHA-256 of the schema's exact text and of the code that judged it: the bundle's
 *   chunk of check.ts (`code`: its name carries esbuild's hash of its content and of every chunk
 *   it imports, the precompiled meta-schema among them), re2js's version (patterns) and Node's
 *   (the pattern syntax check). A schema that ajv judged (compiled for real, or a `$schema`
 *   spelling the precompiled meta-schema check leaves to ajv) is not remembered. Run from
 *   the sources (no bundle, so no hash of the code), nothing is remembered.
 * - One file per registry, `$XDG_CACHE_HOME/bq/schema-check/<hash of the registry's path>.json`
 *   (else `~/.cache/bq/…`), rewritten (atomically) with the current run's sound schemas only.
 *   An unreadable or unwritable cache is no cache. `BQ_SCHEMA_CHECK_CACHE=off` turns it off.
 */

const BUNDLED_CHUNK = /\/chunks\/[\w-]+-[A-Z0-9]{8}\.js$/

export class CheckCache {
  private readonly seen = new Map<string, string | null>()
  private changed = false

  private constructor(
    private readonly file: string | undefined,
    private readonly salt: string,
    private readonly known: Map<string, string | null>,
  ) {}

  /**
   * The cache of the registry at `registryPath` (absolute), for the checking code at URL `code`;
   * one that remembers nothing when off.
   */
  static open(registryPath: string, code: string, env: NodeJS.ProcessEnv = process.env): CheckCache {
    const off = new CheckCache(undefined, '', new Map())
    if (env.BQ_SCHEMA_CHECK_CACHE === 'off' || !BUNDLED_CHUNK.test(code)) return off
    let salt: string
    try {
      salt = `${code}\n${packageVersion(createRequire(code).resolve('re2js'))}\n${process.version}\n`
    } catch {
      return off
    }
    const xdg = env.XDG_CACHE_HOME
    const folder = join(xdg !== undefined && isAbsolute(xdg) ? xdg : join(homedir(), '.cache'), 'bq', 'schema-check')
    const file = join(folder, `${createHash('sha256').update(registryPath).digest('hex').slice(0, 32)}.json`)
    const known = new Map<string, string | null>()
    try {
      const saved = JSON.parse(readFileSync(file, 'utf8')) as {sound?: Record<string, unknown>}
      for (const [key, id] of Object.entries(saved.sound ?? {})) if (id === null || typeof id === 'string') known.set(key, id)
    } catch {
      // None yet, or not ours to read: checked afresh, and written anew.
    }
    return new CheckCache(file, salt, known)
  }

  private key(text: string): string {
    return createHash('sha256').update(this.salt).update(text).digest('hex')
  }

  /** The root `$id` (null for none) of a schema text proven sound before; undefined when not known. */
  soundBefore(text: string): string | null | undefined {
    if (this.file === undefined) return undefined
    const key = this.key(text)
    const id = this.known.get(key)
    if (id !== undefined) this.seen.set(key, id)
    return id
  }

  /** Remembers a schema text proven sound in this run. */
  remember(text: string, id: string | null): void {
    if (this.file === undefined) return
    const key = this.key(text)
    if (!this.known.has(key)) this.changed = true
    this.seen.set(key, id)
  }

  /** Writes this run's sound schemas when they differ from what was read; never fails the check. */
  save(): void {
    if (this.file === undefined || (!this.changed && this.seen.size === this.known.size)) return
    try {
      mkdirSync(join(this.file, '..'), {recursive: true, mode: 0o700})
      const temporary = `${this.file}.${process.pid}.tmp`
      writeFileSync(temporary, JSON.stringify({sound: Object.fromEntries(this.seen)}), {mode: 0o600})
      renameSync(temporary, this.file)
    } catch {
      // A read-only or full disk: the next run checks afresh.
    }
  }
}

/** The version in the nearest package.json above a package's entry file that has one (not a folder's `{"type": …}`). */
function packageVersion(entry: string): string {
  for (let folder = dirname(entry); folder !== dirname(folder); folder = dirname(folder)) {
    let text: string
    try {
      text = readFileSync(join(folder, 'package.json'), 'utf8')
    } catch {
      continue
    }
    const {version} = JSON.parse(text) as {version?: unknown}
    if (typeof version === 'string') return version
  }
  throw new Error(`no package.json above ${entry}`)
}
