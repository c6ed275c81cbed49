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

export const hasTmux = spawnSync('tmux', ['-V']).status === 0

/**
 * bq in a tmux pane, for interactive sessions (arrow keys, prompts answered one at a time):
 * keys go in with send-keys, the screen comes out with capture-pane. Each session has its own
 * tmux server (socket), so tests never touch anyone else's tmux. The exit code is printed as
 * `EXIT=<code>` after bq ends.
 */
export class TmuxBq {
  private readonly socket = `bq-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`

  constructor(args: string[], options: {env?: NodeJS.ProcessEnv; cwd?: string} = {}) {
    const env = {NO_COLOR: '1', BQ_CONTEXT: '', ...options.env}
    const assignments = Object.entries(env).map(([name, value]) => `${name}=${quote(value ?? '')}`)
    const command = `cd ${quote(options.cwd ?? repoRoot)} && env ${assignments.join(' ')} ${[process.execPath, binRun, ...args].map(quote).join(' ')}; echo EXIT=$?; sleep 600`
    this.tmux(['new-session', '-d', '-s', 'bq', '-x', '220', '-y', '60', command])
  }

  private tmux(args: string[]): string {
    const result = spawnSync('tmux', ['-L', this.socket, ...args], {encoding: 'utf8'})
    if (result.status !== 0) throw new Error(`tmux ${args[0]}: ${result.stderr}`)
    return result.stdout
  }

  /** Key names as tmux knows them: Enter, Down, C-c, or literal text. */
  keys(...keys: string[]): void {
    this.tmux(['send-keys', '-t', 'bq', ...keys])
  }

  /** The whole pane, history included. */
  screen(): string {
    return this.tmux(['capture-pane', '-p', '-J', '-S', '-', '-t', 'bq'])
  }

  /** Waits until the screen holds `text` `times` times (an interactive step has been reached). */
  async waitFor(text: string, options: {times?: number; timeoutMs?: number} = {}): Promise<string> {
    const deadline = Date.now() + (options.timeoutMs ?? 15_000)
    for (;;) {
      const screen = this.screen()
      if (screen.split(text).length - 1 >= (options.times ?? 1)) return screen
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${JSON.stringify(text)}; screen:\n${screen}`)
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
  }

  /** The exit code, once bq has ended. */
  async exitCode(timeoutMs?: number): Promise<number> {
    const screen = await this.waitFor('EXIT=', {timeoutMs})
    return Number(/EXIT=(\d+)/.exec(screen)?.[1])
  }

  close(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server'])
  }
}
