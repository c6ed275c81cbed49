import {readdirSync, realpathSync, statSync} from 'node:fs'
import {join} from 'node:path'

/**
 * Turns command-line inputs into a list of readable paths: files as given, directories walked
 * recursively for .json/.jsonl/.ndjson files, glob patterns expanded (quoted globs work even
 * where the shell did not expand them), `-` for stdin. A path that does not exist is kept with
 * an error so it is reported without stopping the others. A file reached twice (named twice, or
 * through a symlink loop a glob walks) is read once.
 */

export interface Input {
  path: string
  error?: {code: string; message: string}
}

const MESSAGE_FILE = /\.(json|jsonl|ndjson)$/i
const GLOB_CHARS = /[*?[\]{}]/

export async function expandInputs(args: string[]): Promise<Input[]> {
  const inputs: Input[] = []
  for (const arg of args) {
    if (arg === '-') {
      inputs.push({path: '-'})
      continue
    }
    let stats
    try {
      stats = statSync(arg)
    } catch {
      stats = undefined
    }
    if (stats?.isDirectory()) {
      const files = walk(arg)
      if (files.length === 0) inputs.push({path: arg, error: {code: 'input.no_files', message: 'directory holds no .json, .jsonl or .ndjson files'}})
      inputs.push(...files.map((path) => ({path})))
    } else if (stats) {
      inputs.push({path: arg})
    } else if (GLOB_CHARS.test(arg)) {
      // Loaded only when a pattern reaches us unexpanded.
      const {glob} = await import('tinyglobby')
      const matches = (await glob(arg, {onlyFiles: true, dot: false, expandDirectories: false})).sort()
      if (matches.length === 0) inputs.push({path: arg, error: {code: 'input.no_match', message: 'no file matches this pattern'}})
      inputs.push(...matches.map((path) => ({path})))
    } else {
      inputs.push({path: arg, error: {code: 'input.not_found', message: 'no such file or directory'}})
    }
  }
  return onePerFile(inputs)
}

/** Keeps the first input of each real file; stdin and inputs with errors are kept as they are. */
function onePerFile(inputs: Input[]): Input[] {
  const seen = new Set<string>()
  return inputs.filter((input) => {
    if (input.path === '-' || input.error !== undefined) return true
    let real: string
    try {
      real = realpathSync(input.path)
    } catch {
      return true
    }
    if (seen.has(real)) return false
    seen.add(real)
    return true
  })
}

/** Message files under a directory, depth first, in name order (stable output). */
function walk(dir: string): string[] {
  const found: string[] = []
  const pending = [dir]
  while (pending.length > 0) {
    const current = pending.pop() as string
    let entries
    try {
      entries = readdirSync(current, {withFileTypes: true})
    } catch {
      continue
    }
    const subdirs: string[] = []
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(current, entry.name)
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && !entry.name.startsWith('.')) subdirs.push(path)
      } else if (entry.isFile() && MESSAGE_FILE.test(entry.name)) {
        found.push(path)
      }
    }
    pending.push(...subdirs.reverse())
  }
  return found
}
