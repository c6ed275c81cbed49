/** Runs the built CLI (bin/run.js) as a user would, capturing output and exit code. */
import {spawn} from 'node:child_process'
import {rmSync} from 'node:fs'
import type {ChildProcessWithoutNullStreams} from 'node:child_process'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {repoRoot} from './conformance.js'

export interface CliResult {
  code: number
  stdout: string
  stderr: string
}

export const binRun = path.join(repoRoot, 'bin', 'run.js')

export interface RunOptions {
  stdin?: string | Buffer
  env?: NodeJS.ProcessEnv
  cwd?: string
  timeoutMs?: number
}

/**
 * No test acts through the developer's own contexts (~/.config/bq/contexts.json, $BQ_CONTEXT):
 * a config directory that does not exist, unless a test passes its own XDG_CONFIG_HOME. Runs are
 * recorded in a ledger of the tests' own, not the developer's ($BQ_LEDGER), and `bq schema check`
 * remembers its proofs in a cache folder of the tests' own ($XDG_CACHE_HOME).
 */
const testLedger = path.join(tmpdir(), `bq-tests-ledger-${process.pid}.db`)
const isolatedConfig = {XDG_CONFIG_HOME: path.join(tmpdir(), 'bq-tests-no-config'), XDG_CACHE_HOME: path.join(tmpdir(), 'bq-tests-cache'), BQ_CONTEXT: '', BQ_LEDGER: testLedger}
// One ledger per test process: the loop guard (dlq redrive) warns about ids an earlier run
// redrove, and fixtures reuse ids, so a ledger shared by every file made a file's output depend on
// which files ran before it.
process.on('exit', () => {
  for (const suffix of ['', '-wal', '-shm']) rmSync(testLedger + suffix, {force: true})
})

/** Starts the CLI and hands back the child (to signal it) and its result when it ends. */
export function startBq(args: string[], options: RunOptions = {}): {child: ChildProcessWithoutNullStreams; done: Promise<CliResult>} {
  const child = spawn(process.execPath, [binRun, ...args], {
    cwd: options.cwd ?? repoRoot,
    env: {...process.env, NO_COLOR: '1', ...isolatedConfig, ...options.env},
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  const done = new Promise<CliResult>((resolve, reject) => {
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
  })
  child.stdin.on('error', () => {})
  child.stdin.end(options.stdin ?? '')
  return {child, done}
}

export function runBq(args: string[], options: RunOptions = {}): Promise<CliResult> {
  return startBq(args, options).done
}

/** What every command prints under --json (src/lib/output/json-output.ts). */
export type JsonOutput =
  | {ok: true; result: Record<string, unknown>; warnings: string[]}
  | {ok: false; error: {code: string; message: string; exit_code: number}; result?: Record<string, unknown>; warnings: string[]}

/** Parses a command's --json output, failing with the text when it is not the JSON envelope. */
export function jsonOutput(stdout: string): JsonOutput {
  let parsed: unknown
  try {
    parsed = JSON.parse(stdout)
  } catch {
    throw new Error(`not JSON: ${stdout}`)
  }
  if (typeof parsed !== 'object' || parsed === null || typeof (parsed as {ok?: unknown}).ok !== 'boolean' || !Array.isArray((parsed as {warnings?: unknown}).warnings)) {
    throw new Error(`not bq's JSON output ({ok, result | error, warnings}): ${stdout}`)
  }
  return parsed as JsonOutput
}

/**
 * The `result` of a command's --json output: what it reported, on success or (for a partial or
 * interrupted run, or validate's invalid input) with its failure. Throws when there is none.
 */
export function jsonResult(stdout: string): Record<string, unknown> {
  const output = jsonOutput(stdout)
  if (output.result === undefined) throw new Error(`no result in the JSON output: ${stdout}`)
  return output.result
}

/** A stack trace in output means an error escaped bq's error handling. */
export function hasStackTrace(text: string): boolean {
  return /\n\s+at .+[(:]\d+/.test(text) || /^\s+at /m.test(text)
}
