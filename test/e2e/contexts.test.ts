// @test-uses rabbitmq redis
/**
 * bq context end to end through bin/run.js: the file and its secrets, the broker each command acts
 * on (and says so), the JSON `context` key, a password filled in from a variable or a file on a
 * real broker (RabbitMQ, guest/guest), and the guardrails of a protected context, including the
 * typed confirmation on a pseudo-terminal (util-linux `script`).
 */
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {spawn, spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {requireBroker, uniqueQueue} from '../support/brokers.js'
import {binRun, hasStackTrace, jsonOutput, jsonResult, runBq} from '../support/cli.js'
import type {CliResult} from '../support/cli.js'
import {repoRoot} from '../support/conformance.js'

const exampleDlq = path.join(repoRoot, 'examples', 'orders.dlq.jsonl')
const amqpUrl = new URL(process.env.BQ_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672')
let root: string
let counter = 0

before(() => {
  root = mkdtempSync(path.join(tmpdir(), 'bq-contexts-e2e-'))
})
after(() => rmSync(root, {recursive: true, force: true}))

/** A fresh config and data directory: no contexts, an empty embedded store. */
function home(): {env: NodeJS.ProcessEnv; file: string; bq: (args: string[], extra?: NodeJS.ProcessEnv) => Promise<CliResult>} {
  const dir = path.join(root, `home-${++counter}`)
  const env = {XDG_CONFIG_HOME: path.join(dir, 'config'), XDG_DATA_HOME: path.join(dir, 'data'), BQ_BROKER: '', BQ_CONTEXT: ''}
  return {env, file: path.join(dir, 'config', 'bq', 'contexts.json'), bq: (args, extra = {}) => runBq(args, {env: {...env, ...extra}})}
}

function store(name: string): string {
  return `sqlite://${path.join(root, `${name}-${++counter}.db`)}`
}

function oneLine(stderr: string): void {
  assert.ok(!hasStackTrace(stderr), stderr)
  assert.equal(stderr.trimEnd().split('\n').length, 1, stderr)
}

async function depth(bq: (args: string[]) => Promise<CliResult>, queue: string, where: string[]): Promise<number> {
  const peek = await bq(['peek', queue, '--limit', '1', '--json', ...where])
  assert.equal(peek.code, 0, peek.stderr)
  return jsonResult(peek.stdout).depth as number
}

describe('bq context: the file and its secrets', () => {
  test('add refuses a URL with a password, saving nothing; with --password-env it stores only the reference, 0600', async () => {
    const {bq, file} = home()
    const refused = await bq(['context', 'add', 'prod', '--broker', 'amqp://ops:hunter2@rabbit/orders'])
    assert.equal(refused.code, 2)
    oneLine(refused.stderr)
    assert.match(refused.stderr, /^Error: amqp:\/\/ops:\*\*\*@rabbit\/orders holds a secret, and bq does not store secrets in clear: .*--password-env VAR or --password-file PATH/)
    assert.doesNotMatch(refused.stderr, /hunter2/)
    assert.equal(existsSync(file), false)

    const added = await bq(['context', 'add', 'prod', '--broker', 'amqp://ops@rabbit/orders', '--password-env', 'PROD_PW', '--protected'])
    assert.equal(added.code, 0, added.stderr)
    assert.equal(added.stderr, '')
    assert.equal(statSync(file).mode & 0o777, 0o600)
    assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')).contexts, {prod: {broker: 'amqp://ops@rabbit/orders', protected: true, password: {env: 'PROD_PW'}}})
    const again = await bq(['context', 'add', 'prod', '--broker', 'redis://x:6379'])
    assert.equal(again.code, 2)
    assert.match(again.stderr, /context prod exists: add --force/)
  })

  test('list (ls), use, show, remove; --json results', async () => {
    const {bq} = home()
    assert.equal((await bq(['context', 'add', 'a', '--broker', store('a')])).code, 0)
    assert.equal((await bq(['context', 'add', 'b', '--broker', 'redis://127.0.0.1:6379/0', '--password-file', 'pw.txt'])).code, 0)
    assert.equal((await bq(['context', 'use', 'b'])).code, 0)
    const listed = jsonResult((await bq(['context', 'ls', '--json'])).stdout)
    assert.equal(listed.current, 'b')
    assert.deepEqual((listed.contexts as Array<{name: string; current: boolean}>).map((c) => [c.name, c.current]), [['a', false], ['b', true]])
    const human = await bq(['context', 'list'])
    assert.match(human.stdout, /\* b\s+redis:\/\/127\.0\.0\.1:6379\/0/)
    const shown = jsonResult((await bq(['context', 'show', '--json'])).stdout)
    assert.equal(shown.name, 'b')
    assert.deepEqual(shown.password, {file: path.join(repoRoot, 'pw.txt')})
    assert.equal(shown.password_available, false)
    assert.equal((await bq(['context', 'use', 'nope'])).code, 2)
    const removed = await bq(['context', 'remove', 'b', '--json'])
    assert.deepEqual(jsonResult(removed.stdout), {removed: 'b', current: null})
    assert.match((await bq(['context', 'show'])).stdout, /^no context in use: commands act on sqlite:\/\//)
    assert.equal((await bq(['context', 'rm', 'b'])).code, 2)
  })
})

describe('which broker a command acts on, and saying so', () => {
  test('--broker > --context > $BQ_BROKER > $BQ_CONTEXT > current > embedded; one stderr line only with a context', async () => {
    const {bq, env} = home()
    const [a, b, c, plain] = [store('a'), store('b'), store('c'), store('plain')]
    for (const [name, url] of [['a', a], ['b', b], ['c', c]]) assert.equal((await bq(['context', 'add', name, '--broker', url])).code, 0)
    assert.equal((await bq(['context', 'use', 'c'])).code, 0)
    const publish = (extra: string[], more: NodeJS.ProcessEnv = {}) => bq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', 'q', ...extra], more)

    const viaFlag = await publish(['--context', 'a'], {BQ_BROKER: b, BQ_CONTEXT: 'b'})
    assert.equal(viaFlag.code, 0, viaFlag.stderr)
    assert.ok(viaFlag.stderr.startsWith(`bq: context a → ${a}\n`), viaFlag.stderr)
    const viaBroker = await publish(['-b', plain], {BQ_CONTEXT: 'b'})
    assert.doesNotMatch(viaBroker.stderr, /bq: context/)
    const viaEnvBroker = await publish([], {BQ_BROKER: plain, BQ_CONTEXT: 'b'})
    assert.doesNotMatch(viaEnvBroker.stderr, /bq: context/)
    const viaEnvContext = await publish([], {BQ_CONTEXT: 'b'})
    assert.ok(viaEnvContext.stderr.startsWith(`bq: context b → ${b}\n`), viaEnvContext.stderr)
    const viaCurrent = await publish([])
    assert.ok(viaCurrent.stderr.startsWith(`bq: context c → ${c}\n`), viaCurrent.stderr)
    for (const [url, expected] of [[a, 1], [b, 1], [c, 1], [plain, 2]] as const) assert.equal(await depth(bq, 'q', ['-b', url]), expected, url)
    assert.equal(existsSync(path.join(env.XDG_DATA_HOME as string, 'bq', 'queues.db')), false, 'the embedded default was not touched')

    const both = await publish(['-b', plain, '--context', 'a'])
    assert.equal(both.code, 2)
    oneLine(both.stderr)
    assert.match(both.stderr, /^Error: --broker and --context both name a broker: give one of them/)
    const unknown = await publish(['--context', 'nope'])
    assert.equal(unknown.code, 2)
    assert.match(unknown.stderr, /^Error: no context named "nope" \(from --context\)/)
    assert.match((await publish(['--context', ''])).stderr, /^Error: --context is empty \(an unset shell variable\?\): name a context/)
  })

  test('--json adds a last `context` key only when a context is in use', async () => {
    const {bq} = home()
    const url = store('json')
    assert.equal((await bq(['context', 'add', 'j', '--broker', url, '--protected'])).code, 0)
    const through = await bq(['peek', 'q', '--json', '--context', 'j'])
    const output = jsonOutput(through.stdout)
    assert.deepEqual(Object.keys(output), ['ok', 'result', 'warnings', 'context'])
    assert.deepEqual((output as unknown as {context: unknown}).context, {name: 'j', broker: url, protected: true})
    const failed = jsonOutput((await bq(['replay', exampleDlq, '--to', 'q', '--json', '--context', 'j'])).stdout)
    assert.deepEqual(Object.keys(failed), ['ok', 'error', 'warnings', 'context'])
    assert.deepEqual(Object.keys(jsonOutput((await bq(['peek', 'q', '--json', '-b', url])).stdout)), ['ok', 'result', 'warnings'])
  })
})

describe('a password filled in at use time (RabbitMQ)', () => {
  test('from --password-env and --password-file; a missing one is a one-line exit 2', async (t: TestContext) => {
    if (!(await requireBroker(t, 'RabbitMQ', amqpUrl.hostname, Number(amqpUrl.port || 5672)))) return
    const {bq} = home()
    const base = `amqp://${amqpUrl.username}@${amqpUrl.host}/`
    const secret = decodeURIComponent(amqpUrl.password)
    const file = path.join(root, `pw-${++counter}`)
    writeFileSync(file, `${secret}\n`)
    assert.equal((await bq(['context', 'add', 'viaenv', '--broker', base, '--password-env', 'BQ_TEST_RMQ_PW'])).code, 0)
    assert.equal((await bq(['context', 'add', 'viafile', '--broker', base, '--password-file', file])).code, 0)
    const queue = uniqueQueue('ctx')
    const published = await bq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--context', 'viaenv'], {BQ_TEST_RMQ_PW: secret})
    assert.equal(published.code, 0, published.stderr)
    assert.match(published.stderr, new RegExp(`^bq: context viaenv → amqp://${amqpUrl.username}@`))
    assert.equal(await depth(bq, queue, ['--context', 'viafile']), 1)

    const missing = await bq(['peek', queue, '--context', 'viaenv'])
    assert.equal(missing.code, 2)
    oneLine(missing.stderr)
    assert.match(missing.stderr, /^Error: context viaenv: its password variable \$BQ_TEST_RMQ_PW is not set/)
    rmSync(file)
    const gone = await bq(['peek', queue, '--context', 'viafile'])
    assert.equal(gone.code, 2)
    assert.match(gone.stderr, /^Error: context viafile: cannot read its password file .*no such file/)
  })
})

describe('a protected context', () => {
  /** A store with the example dead letters on `q.dlq`, behind a protected context `prod`. */
  async function protectedStore(): Promise<{bq: ReturnType<typeof home>['bq']; env: NodeJS.ProcessEnv; url: string}> {
    const {bq, env} = home()
    const url = store('prod')
    const seeded = await bq(['replay', exampleDlq, '--as-is', '--to', 'q.dlq', '--yes', '-b', url])
    assert.equal(seeded.code, 0, seeded.stderr)
    assert.equal((await bq(['context', 'add', 'prod', '--broker', url, '--protected'])).code, 0)
    assert.equal((await bq(['context', 'use', 'prod'])).code, 0)
    return {bq, env, url}
  }

  test('redrive and replay refuse --yes without --max, and ask for a terminal without --yes; --yes --max N runs', async () => {
    const {bq, url} = await protectedStore()
    const noMax = await bq(['dlq', 'redrive', 'q', '--to', 'sandbox', '--yes'])
    assert.equal(noMax.code, 2)
    assert.match(noMax.stderr, /^bq: context prod \(protected\) → sqlite:\/\/.*\nError: context prod is protected: --yes needs --max N \(N > 0\)/)
    const replayNoMax = jsonOutput((await bq(['replay', exampleDlq, '--to', 'sandbox', '--yes', '--json'])).stdout)
    assert.equal(!replayNoMax.ok && replayNoMax.error.code, 'protected-context')
    const noTerminal = await bq(['dlq', 'redrive', 'q', '--to', 'sandbox'])
    assert.equal(noTerminal.code, 2)
    assert.match(noTerminal.stderr, /context prod is protected: not on a terminal, so nothing was changed; run it on a terminal, or add --yes --max N/)
    assert.equal(await depth(bq, 'q.dlq', ['-b', url]), 4)
    assert.equal(await depth(bq, 'sandbox', ['-b', url]), 0)

    const bounded = await bq(['dlq', 'redrive', 'q', '--to', 'sandbox', '--yes', '--max', '2'])
    assert.equal(bounded.code, 0, bounded.stderr)
    assert.equal(await depth(bq, 'sandbox', ['-b', url]), 2)
    // A dry run changes nothing: no guardrail.
    assert.equal((await bq(['dlq', 'redrive', 'q', '--dry-run'])).code, 0)
  })

  test('on a terminal the queue name must be typed: a wrong name changes nothing, the right one redrives', async (t: TestContext) => {
    if (spawnSync('script', ['--version']).status !== 0) {
      t.skip('util-linux script is not installed (needed for a pseudo-terminal)')
      return
    }
    const {env, bq, url} = await protectedStore()
    const wrong = await onTerminal(['dlq', 'redrive', 'q', '--to', 'sandbox'], env, 'q\r')
    assert.equal(wrong.code, 2, wrong.screen)
    assert.match(wrong.screen, /\[context prod, protected\] Redrive up to 4 message\(s\) from q\.dlq/)
    assert.match(wrong.screen, /not confirmed \(typed "q", not q\.dlq\): nothing was changed/)
    assert.equal(await depth(bq, 'sandbox', ['-b', url]), 0)
    const right = await onTerminal(['dlq', 'redrive', 'q', '--to', 'sandbox'], env, 'q.dlq\r')
    assert.equal(right.code, 0, right.screen)
    assert.equal(await depth(bq, 'sandbox', ['-b', url]), 4)
    assert.equal(await depth(bq, 'q.dlq', ['-b', url]), 0)
  })
})

/** Runs bq on a pseudo-terminal (script -e returns its exit code), answering the prompt with `answer`. */
async function onTerminal(args: string[], env: NodeJS.ProcessEnv, answer: string): Promise<{code: number | null; screen: string}> {
  const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`
  const command = [process.execPath, binRun, ...args].map(quote).join(' ')
  const child = spawn('script', ['-qfec', command, '/dev/null'], {env: {...process.env, NO_COLOR: '1', ...env}, stdio: ['pipe', 'pipe', 'pipe']})
  let screen = ''
  let answered = false
  const done = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
  child.stdout.on('data', (chunk: Buffer) => {
    screen += chunk.toString('utf8')
    if (!answered && /to\s+confirm:/.test(screen)) {
      answered = true
      child.stdin.write(answer)
    }
  })
  const code = await done
  clearTimeout(timer)
  return {code, screen}
}
