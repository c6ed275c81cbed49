/** Mistyped command lines: one line on stderr naming the problem and the help to read, exit 2. */
import {test} from 'node:test'
import assert from 'node:assert/strict'

import {jsonOutput, runBq} from '../support/cli.js'

const cases: Array<[string, string[], RegExp]> = [
  ['an unknown flag', ['dlq', 'redrive', 'orders', '--urn', 'urn:babel:orders:created'], /^Error: Nonexistent flag: --urn \(see bq dlq redrive --help\)$/],
  ['a missing argument', ['dlq', 'redrive'], /^Error: Missing 1 required arg: queue .*\(see bq dlq redrive --help\)$/],
  ['extra arguments', ['peek', 'a', 'b'], /^Error: Unexpected argument: b \(see bq peek --help\)$/],
  ['a flag value of the wrong type', ['peek', 'orders', '--limit', 'many'], /^Error: Parsing --limit Expected an integer but received: many \(see bq peek --help\)$/],
]

for (const [what, args, expected] of cases) {
  test(`${what} is one line and exit 2`, async () => {
    const result = await runBq(args)
    assert.equal(result.code, 2, result.stderr)
    assert.equal(result.stdout, '')
    assert.match(result.stderr.trimEnd(), expected)
    assert.equal(result.stderr.trimEnd().split('\n').length, 1, result.stderr)
  })
}

test('under --json the usage error is the JSON failure object', async () => {
  const result = await runBq(['peek', 'orders', '--json', '--bogus'])
  assert.equal(result.code, 2)
  assert.deepEqual(jsonOutput(result.stdout), {ok: false, error: {code: 'usage', message: 'Nonexistent flag: --bogus (see bq peek --help)', exit_code: 2}, warnings: []})
})
