/** Runs bq on a pseudo-terminal (util-linux `script`), for what bq does only on a terminal. */
import {spawn, spawnSync} from 'node:child_process'

import {binRun} from './cli.js'
import {repoRoot} from './conformance.js'

export const hasScript = spawnSync('script', ['--version']).status === 0

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`

/**
 * The screen (stdout and stderr, as the terminal got them) and the exit code (script -e).
 * `redirect` is a shell redirection of bq's own stdout or stderr (e.g. `> /dev/null`), so a test
 * can see one stream alone on the terminal.
 */
export function onTerminal(args: string[], options: {env?: NodeJS.ProcessEnv; redirect?: string; timeoutMs?: number} = {}): Promise<{code: number | null; screen: string}> {
  const command = [process.execPath, binRun, ...args].map(quote).join(' ') + (options.redirect ? ` ${options.redirect}` : '')
  const child = spawn('script', ['-qfec', command, '/dev/null'], {cwd: repoRoot, env: {...process.env, NO_COLOR: '1', BQ_CONTEXT: '', ...options.env}, stdio: ['pipe', 'pipe', 'pipe']})
  let screen = ''
  child.stdout.on('data', (chunk: Buffer) => (screen += chunk.toString('utf8')))
  child.stdin.end()
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000)
  return new Promise((resolve) => child.on('close', (code) => {
    clearTimeout(timer)
    resolve({code, screen})
  }))
}
