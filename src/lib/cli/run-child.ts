import {spawn} from 'node:child_process'
import {openSync, closeSync} from 'node:fs'
import {join} from 'node:path'

/**
 * Runs one bq command as a child process on the same terminal, so it keeps every safety it has
 * on its own: its confirmation prompt, delivery-cost checks, run ledger and signal handling.
 * Ctrl-C during the child is the child's to handle; the session waits and carries on.
 * Returns the child's exit code (128 + signal number when a signal ended it).
 */
export function runBqChild(root: string, argv: string[], options: {stdoutFile?: string} = {}): Promise<number> {
  // `wx`: an export never overwrites a file.
  const out = options.stdoutFile === undefined ? 'inherit' : openSync(options.stdoutFile, 'wx')
  const child = spawn(process.execPath, [join(root, 'bin', 'run.js'), ...argv], {stdio: ['inherit', out, 'inherit']})
  const ignore = () => {}
  process.on('SIGINT', ignore)
  return new Promise<number>((resolve, reject) => {
    const done = () => {
      process.off('SIGINT', ignore)
      if (typeof out === 'number') closeSync(out)
    }
    child.on('error', (error) => {
      done()
      reject(error)
    })
    child.on('close', (code, signal) => {
      done()
      resolve(code ?? (signal === 'SIGINT' ? 130 : signal === 'SIGTERM' ? 143 : 1))
    })
  })
}
