import {execFile} from 'node:child_process'

import {UsageError, describeError} from '../errors.js'

/**
 * Files as they were at a git ref (`bq schema compat --against REF`), read with git itself:
 * one `git cat-file --batch` for all of them, so 500 schemas cost one process, not 500
 * `git show`s. Paths are relative to the folder given (git's repository is found from it).
 */
export class GitFiles {
  private constructor(private readonly cwd: string, private readonly ref: string, private readonly prefix: string) {}

  /** Checks that `cwd` is inside a git work tree and `ref` names a commit. */
  static async open(cwd: string, ref: string): Promise<GitFiles> {
    if (ref.startsWith('-')) throw new UsageError(`--against ${ref}: not a git ref`)
    try {
      await git(cwd, ['rev-parse', '--is-inside-work-tree'])
    } catch {
      throw new UsageError(`--against needs a git repository: ${cwd} is not inside one`)
    }
    try {
      await git(cwd, ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])
    } catch {
      throw new UsageError(`--against ${ref}: not a commit in the repository of ${cwd}`)
    }
    const prefix = (await git(cwd, ['rev-parse', '--show-prefix'])).toString('utf8').trim()
    return new GitFiles(cwd, ref, prefix)
  }

  /** Each path's text at the ref; undefined where the file did not exist there. */
  async read(paths: string[]): Promise<Map<string, string | undefined>> {
    const found = new Map<string, string | undefined>()
    if (paths.length === 0) return found
    const input = paths.map((p) => `${this.ref}:${this.prefix}${p}\n`).join('')
    const output = await git(this.cwd, ['cat-file', '--batch'], input)
    let at = 0
    for (const path of paths) {
      const end = output.indexOf(10, at)
      const header = output.subarray(at, end).toString('utf8')
      at = end + 1
      const match = /^\S+ (\w+) (\d+)$/.exec(header)
      if (!match) {
        found.set(path, undefined)
        continue
      }
      const size = Number(match[2])
      found.set(path, match[1] === 'blob' ? output.subarray(at, at + size).toString('utf8') : undefined)
      at += size + 1
    }
    return found
  }
}

function git(cwd: string, args: string[], input?: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = execFile('git', args, {cwd, encoding: 'buffer', maxBuffer: 1 << 30}, (error, stdout, stderr) => {
      if (error) reject(new Error(`git ${args[0]}: ${stderr.toString('utf8').trim() || describeError(error)}`))
      else resolve(stdout)
    })
    // git may exit before reading its input (a bad ref): that is reported by its exit, not as EPIPE.
    child.stdin?.on('error', () => {})
    child.stdin?.end(input ?? '')
  })
}
