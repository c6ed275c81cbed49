/**
 * The command lines `bq dlq triage` runs and prints: a group's --select matches exactly its own
 * reason and URN (glob characters included), and the printed line reads back, through a real
 * shell, as the argv that was run.
 */
import {test} from 'node:test'
import assert from 'node:assert/strict'
import {spawnSync} from 'node:child_process'

import {commandArgv, commandLine, exactSelect, selectArgs} from '../../src/lib/cli/triage-argv.js'
import {parseSelector} from '../../src/lib/ops/match.js'
import type {MessageView} from '../../src/lib/ops/message-view.js'

const withReason = (reason: string) => ({deadLetter: {reason}}) as unknown as MessageView

test('exactSelect matches its value and nothing else, glob characters included', () => {
  for (const value of ['failed', 'timeout*', 'a?b', 'x.y (z) [1] $^|\\']) {
    const selector = parseSelector(exactSelect('reason', value))
    assert.equal(selector.matches(withReason(value)), true, value)
    assert.equal(selector.matches(withReason(`${value}x`)), false, value)
    assert.equal(selector.matches(withReason(value.slice(1))), false, value)
  }
  assert.equal(exactSelect('reason', 'failed'), 'reason=failed')
})

test('the printed line reads back through sh as the argv, the broker shown masked', () => {
  const scope = {queue: 'orders', broker: 'redis://:secret@host:6379', brokerShown: 'redis://:***@host:6379'}
  const rest = selectArgs({kind: 'group', reason: "it's *odd*", urn: 'urn:babel:orders:created'})
  const shown = commandArgv(['dlq', 'redrive', 'orders'], scope, rest, true)
  assert.ok(!shown.join(' ').includes('secret'))
  assert.ok(commandArgv(['dlq', 'redrive', 'orders'], scope, rest, false).includes(scope.broker))
  const line = commandLine(shown)
  const echoed = spawnSync('sh', ['-c', `set -- ${line}; printf '%s\\n' "$@"`], {encoding: 'utf8'})
  assert.deepEqual(echoed.stdout.trimEnd().split('\n'), ['bq', ...shown])
})

test('a queue name with spaces, quotes and control characters is quoted: the line carries no raw control byte and reads back whole', () => {
  for (const queue of ["it's orders", 'orders $(rm -rf x) `y`', 'esc\u001b[31m\nnewline']) {
    const shown = commandArgv(['dlq', 'redrive', queue], {queue}, selectArgs({kind: 'message', id: 'abc'}), true)
    const line = commandLine(shown)
    // eslint-disable-next-line no-control-regex -- raw control bytes are what must not appear
    assert.doesNotMatch(line, /[\u0000-\u001F]/, line)
    // $'…' (control characters) is bash's, ksh's and zsh's quoting, and POSIX's since 2024.
    const echoed = spawnSync('bash', ['-c', `set -- ${line}; printf '%s\\0' "$@"`], {encoding: 'utf8'})
    assert.deepEqual(echoed.stdout.split('\0').slice(0, -1), ['bq', ...shown], line)
  }
})
