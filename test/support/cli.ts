/** Runs the built CLI (bin/run.js) as a user would, capturing output and exit code. */
import {spawn} from 'node:child_process'
import path from 'node:path'

import {repoRoot} from './conformance.js'

export interface CliResult {
  code: number
  stdout: string
  stderr: string
}

export const binRun = path.join(repoRoot, 'bin', 'run.js')

export function runBq(args: string[], options: {stdin?: string | Buffer; env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number} = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [binRun, ...args], {
      cwd: options.cwd ?? repoRoot,
      env: {...process.env, NO_COLOR: '1', ...options.env},
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    const out: Buffer[] = []
    const err: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk))
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000)
    child.on('error', reject)
    child.on('close', (code, signal) => {
      clearTimeout(timer)
      resolve({code: code ?? (signal ? 128 : 1), stdout: Buffer.concat(out).toString('utf8'), stderr: Buffer.concat(err).toString('utf8')})
    })
    child.stdin.on('error', () => {})
    child.stdin.end(options.stdin ?? '')
  })
}

/** A stack trace in output means an error escaped bq's error handling. */
export function hasStackTrace(text: string): boolean {
  return /\n\s+at .+[(:]\d+/.test(text) || /^\s+at /m.test(text)
}
