/**
 * What the production-broker tests (TLS, users with narrow permissions) ask of every bq run: a
 * success with its JSON result, and a refusal that is one error line with its exit code and JSON
 * error code, no stack trace, and none of the given secrets anywhere in the output.
 */
import assert from 'node:assert/strict'

import {hasStackTrace, jsonOutput, jsonResult, runBq, type CliResult} from './cli.js'

/** Runs bq; a stack trace in its output fails the test whatever the exit code. */
export async function bq(args: string[]): Promise<CliResult> {
  const result = await runBq(args)
  assert.ok(!hasStackTrace(result.stdout + result.stderr), result.stdout + result.stderr)
  return result
}

/** Runs bq with --json; it must succeed. Returns its result. */
export async function okResult(args: string[]): Promise<Record<string, unknown>> {
  const result = await bq([...args, '--json'])
  assert.equal(result.code, 0, `${args.join(' ')}: ${result.stdout}${result.stderr}`)
  return jsonResult(result.stdout)
}

/** The meta.id of every message on a queue, in order (`peek --all`). */
export async function peekIds(url: string, queue: string): Promise<string[]> {
  const peek = await okResult(['peek', queue, '--all', '-b', url])
  return (peek.messages as Array<{id: string}>).map((message) => message.id)
}

/** A refused run, with and without --json: the exit code, one error line matching `pattern`, the JSON error code, no secret. Returns the line. */
export async function refusedInOneLine(args: string[], exitCode: number, code: string, pattern: RegExp, secrets: string[] = []): Promise<string> {
  const human = await bq(args)
  const machine = await bq([...args, '--json'])
  assert.equal(human.code, exitCode, human.stdout + human.stderr)
  assert.equal(machine.code, exitCode, machine.stdout + machine.stderr)
  const lines = human.stderr.trim().split('\n').filter((line) => line.startsWith('Error:'))
  assert.equal(lines.length, 1, human.stderr)
  assert.match(lines[0], pattern)
  const output = jsonOutput(machine.stdout)
  assert.equal(output.ok, false)
  if (!output.ok) assert.equal(output.error.code, code)
  for (const secret of secrets) {
    for (const text of [human.stdout, human.stderr, machine.stdout, machine.stderr]) {
      assert.ok(!text.includes(secret) && !text.includes(encodeURIComponent(secret)), `a secret in the output: ${text}`)
    }
  }
  return lines[0]
}
