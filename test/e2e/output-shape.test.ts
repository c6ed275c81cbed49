// @test-uses rabbitmq redis
/**
 * One output style across commands (docs/output-and-exit-codes.md): every --json key bq writes is
 * snake_case and every time is an ISO-8601 UTC string with milliseconds (message bodies and
 * native broker headers are shown as they are, so their keys are not bq's). Tables fit the
 * terminal and draw no rule between rows; piped, they are pure TSV (`peek --headers` too).
 * Connection errors say what to fix.
 */
import {after, before, describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {requireBroker} from '../support/brokers.js'
import {jsonOutput, runBq} from '../support/cli.js'
import {repoRoot} from '../support/conformance.js'
import {hasScript, onTerminal} from '../support/terminal.js'

const exampleDlq = path.join(repoRoot, 'examples', 'orders.dlq.jsonl')
const URN = 'urn:babel:orders:created'
let dir: string
let url: string
let env: NodeJS.ProcessEnv

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-shape-'))
  url = `sqlite://${path.join(dir, 'q.db')}`
  env = {XDG_DATA_HOME: dir, BQ_BROKER: '', XDG_CONFIG_HOME: path.join(dir, 'config'), PW: 'secret'}
  assert.equal((await runBq(['replay', exampleDlq, '--as-is', '--to', 'orders.dlq', '-b', url, '--yes'], {env})).code, 0)
  assert.equal((await runBq(['publish', URN, '-d', '{"order_id":1}', '-q', 'orders', '-b', url, '--count', '3'], {env})).code, 0)
  assert.equal((await runBq(['publish', URN, '-d', '{"order_id":1}', '-q', 'table', '-b', url, '--count', '3'], {env})).code, 0)
  assert.equal((await runBq(['context', 'add', 'dev', '--broker', 'redis://127.0.0.1:6379', '--password-env', 'PW'], {env})).code, 0)
})
after(() => rmSync(dir, {recursive: true, force: true}))

/** Values shown as they are stored: their keys are the message's, not bq's. */
const VERBATIM = new Set(['body', 'bodies', 'envelopes', 'headers', 'key'])
const SNAKE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

/** Every key path that is not snake_case, and every time field that is not an ISO string. */
function problems(value: unknown, where = '$'): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => problems(v, `${where}[${i}]`))
  if (typeof value !== 'object' || value === null) return []
  const found: string[] = []
  for (const [key, child] of Object.entries(value)) {
    const at = `${where}.${key}`
    if (!SNAKE.test(key)) found.push(`${at}: not snake_case`)
    if (/(_at|_time)$/.test(key) && child !== null && !(typeof child === 'string' && ISO.test(child))) found.push(`${at}: ${JSON.stringify(child)} is not an ISO-8601 time`)
    if (!VERBATIM.has(key)) found.push(...problems(child, at))
  }
  return found
}

const COMMANDS: Array<{name: string; args: string[]}> = [
  {name: 'publish', args: ['publish', URN, '-d', '{}', '-q', 'orders', '-b', '%url']},
  {name: 'publish --dry-run', args: ['publish', URN, '-d', '{}', '-q', 'orders', '--dry-run']},
  {name: 'peek --headers', args: ['peek', 'orders.dlq', '--headers', '-b', '%url']},
  {name: 'dlq inspect --list', args: ['dlq', 'inspect', 'orders', '--list', '-b', '%url']},
  {name: 'dlq redrive --dry-run', args: ['dlq', 'redrive', 'orders', '--dry-run', '-b', '%url']},
  {name: 'replay --dry-run', args: ['replay', exampleDlq, '--to', 'sandbox', '--dry-run', '-b', '%url']},
  {name: 'replay', args: ['replay', exampleDlq, '--to', 'sandbox', '--yes', '-b', '%url']},
  {name: 'dlq redrive', args: ['dlq', 'redrive', 'orders', '--to', 'back', '--yes', '-b', '%url']},
  {name: 'dlq recover', args: ['dlq', 'recover', 'orders', '-b', '%url']},
  {name: 'validate', args: ['validate', exampleDlq]},
  {name: 'context list', args: ['context', 'list']},
  {name: 'context show', args: ['context', 'show', 'dev']},
  {name: 'an error', args: ['peek', 'orders', '-b', 'redis://127.0.0.1:1']},
]

describe('--json keys and times', () => {
  for (const command of COMMANDS) {
    test(`${command.name}: snake_case keys, ISO times`, async () => {
      const result = await runBq([...command.args.map((a) => (a === '%url' ? url : a)), '--json'], {env})
      const output = jsonOutput(result.stdout)
      assert.deepEqual(problems(output), [], result.stdout)
    })
  }

  test('the times are there to check: dead letters and groups carry ISO times', async () => {
    assert.equal((await runBq(['replay', exampleDlq, '--as-is', '--to', 'times.dlq', '-b', url, '--yes'], {env})).code, 0)
    const inspect = jsonOutput((await runBq(['dlq', 'inspect', 'times', '--list', '-b', url, '--json'], {env})).stdout)
    assert.ok(inspect.ok)
    const groups = inspect.result.groups as Array<{oldest_failed_at: string | null}>
    assert.ok(groups.some((g) => g.oldest_failed_at !== null && ISO.test(g.oldest_failed_at)), JSON.stringify(groups))
    const messages = inspect.result.messages as Array<{dead_letter: {failed_at?: string; original_queue?: string} | null}>
    assert.ok(messages.some((m) => m.dead_letter?.failed_at !== undefined && ISO.test(m.dead_letter.failed_at) && m.dead_letter.original_queue === 'orders'), JSON.stringify(messages))
    const peek = jsonOutput((await runBq(['peek', 'times.dlq', '-b', url, '--json'], {env})).stdout)
    assert.ok(peek.ok)
    const first = (peek.result.messages as Array<{created_at: string; body: string}>)[0]
    assert.match(first.created_at, ISO)
    // The body is the message exactly as stored: epoch times and all.
    assert.match(first.body, /"failed_at":\d+/)
  })
})

describe('tables', () => {
  test('piped: pure TSV, and peek --headers puts compact JSON in a last column', async () => {
    const result = await runBq(['peek', 'orders', '--headers', '-b', url], {env})
    assert.equal(result.code, 0, result.stderr)
    const lines = result.stdout.trimEnd().split('\n')
    assert.equal(lines[0], ['#', 'id', 'urn', 'trace', 'attempts', 'age', 'lang', 'size', 'valid', 'headers'].join('\t'))
    assert.ok(lines.length > 1)
    for (const line of lines) assert.equal(line.split('\t').length, 10, line)
    for (const line of lines.slice(1)) assert.equal(typeof JSON.parse(line.split('\t')[9]), 'object', line)
  })

  test('on a terminal: fitted to $COLUMNS with an ellipsis, no rule between rows', async (t) => {
    if (!hasScript) {
      t.skip('util-linux script is not installed (needed for a pseudo-terminal)')
      return
    }
    const {code, screen} = await onTerminal(['peek', 'table', '-b', url], {env: {...env, COLUMNS: '70'}, redirect: '2>/dev/null'})
    assert.equal(code, 0, screen)
    const lines = screen.replace(/\r/g, '').trimEnd().split('\n')
    for (const line of lines) assert.ok([...line].length <= 70, `${line} (${[...line].length} > 70)`)
    assert.match(screen, /…/)
    // Top rule, header, three rows, bottom rule: no rules between the rows.
    assert.equal(lines.length, 6, screen)
    assert.equal(lines.filter((line) => /^[├└┌]/.test(line)).length, 2, screen)
  })
})

describe('connection errors in the operator\'s words', () => {
  test('a password holding # or / gets the hint to percent-encode it (and is never printed)', async () => {
    for (const broker of ['amqp://guest:pa#ss@127.0.0.1:5672/', 'redis://:pa/ss@127.0.0.1:6379']) {
      const result = await runBq(['peek', 'orders', '-b', broker], {env})
      assert.equal(result.code, 2, result.stderr)
      assert.match(result.stderr, /must be percent-encoded in the URL \(# as %23, \/ as %2F/)
      assert.ok(!result.stderr.includes('pa#ss') && !result.stderr.includes('pa/ss'), result.stderr)
    }
  })

  test('an unknown RabbitMQ vhost is named (exit 6, permission)', async (t) => {
    if (!(await requireBroker(t, 'RabbitMQ', '127.0.0.1', 5672))) return
    const result = await runBq(['peek', 'orders', '-b', 'amqp://guest:guest@127.0.0.1:5672/no-such-vhost'], {env})
    assert.equal(result.code, 6, result.stderr)
    assert.match(result.stderr, /RabbitMQ at amqp:\/\/guest:\*\*\*@127\.0\.0\.1:5672\/no-such-vhost refused vhost "no-such-vhost" to user "guest": it does not exist or the user has no permissions there/)
  })
})
