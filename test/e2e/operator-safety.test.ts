/**
 * Operator safety, through the built bin/run.js on the embedded store (a fresh temp file per test):
 * - SIGTERM and SIGHUP stop a redrive, replay, publish --count or peek export like Ctrl-C: after
 *   the current batch, with the report, exit 143 / 129 (130 stays Ctrl-C); a second signal exits
 *   at once; nothing is lost or doubled;
 * - publish --count prints each id as the broker confirms it, and an interrupted run says how many
 *   it sent;
 * - peek --raw writes a body's exact bytes; publish refuses data that is not UTF-8;
 * - the redrive question says what it knows (the DLQ's depth), not what it cannot (how many match);
 * - empty --to / --dlq / --queue / --broker / --to-broker values and a queue name where the URN
 *   goes are usage errors (exit 2), with nothing changed;
 * - Ctrl-C at the confirmation prompt is exit 130, one line, nothing changed;
 * - a peek export cut short by the default --limit says so; --all / --limit 0 reads everything.
 */
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {spawn, spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import Database from 'better-sqlite3'

import {binRun, hasStackTrace, jsonOutput, jsonResult, runBq, startBq} from '../support/cli.js'
import type {CliResult} from '../support/cli.js'
import {repoRoot} from '../support/conformance.js'
import {storeDepth, storeIds} from '../support/embedded-store.js'

const exampleDlq = readFileSync(path.join(repoRoot, 'examples', 'orders.dlq.jsonl'), 'utf8').trim().split('\n')
let root: string
/** Keeps the default embedded store (and anything else under XDG_DATA_HOME) inside the temp dir. */
let env: NodeJS.ProcessEnv

before(() => {
  root = mkdtempSync(path.join(tmpdir(), 'bq-operator-'))
  env = {XDG_DATA_HOME: root, BQ_BROKER: ''}
})
after(() => rmSync(root, {recursive: true, force: true}))

let counter = 0
/** A fresh embedded store (its own file) for one test. */
function freshStore(): {url: string; file: string} {
  const file = path.join(root, `store-${++counter}.db`)
  return {url: `sqlite://${file}`, file}
}

function bq(args: string[], options: {stdin?: string | Buffer; timeoutMs?: number} = {}): Promise<CliResult> {
  return runBq(args, {env, ...options})
}

function oneLine(stderr: string): void {
  assert.ok(!hasStackTrace(stderr), stderr)
  assert.equal(stderr.trimEnd().split('\n').length, 1, stderr)
}

/** Publishes `count` messages to `queue` and returns their ids (as printed). */
async function publish(url: string, queue: string, count: number): Promise<string[]> {
  const run = await bq(['publish', 'urn:babel:orders:created', '-d', '{"order_id":1}', '-q', queue, '--count', String(count), '-b', url], {timeoutMs: 120_000})
  assert.equal(run.code, 0, run.stderr)
  return run.stdout.trim().split('\n')
}

/** Every meta.id on a queue, and its depth, read directly (test/support/embedded-store.ts). */
const ids = (url: string, queue: string): Promise<string[]> => storeIds(url, queue)
const depth = (url: string, queue: string): Promise<number> => storeDepth(url, queue)

async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/** Resolves at the first output on the child's stdout; rejects when none comes in time (or the child ends first). */
function firstOutput(child: ReturnType<typeof startBq>['child'], timeoutMs = 20_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('no output before the timeout: ids are not printed as they are confirmed')), timeoutMs)
    child.stdout.once('data', () => {
      clearTimeout(timer)
      resolve()
    })
    child.once('close', () => reject(new Error('the command ended before it printed anything')))
  })
}

/** Every id is in exactly one of the two lists, and together they are `all`. */
function exactlyOnce(all: string[], left: string[], right: string[]): void {
  assert.equal(new Set(left).size, left.length, 'no duplicate on the DLQ')
  assert.equal(new Set(right).size, right.length, 'no duplicate on the target')
  const rightSet = new Set(right)
  assert.deepEqual(left.filter((id) => rightSet.has(id)), [], 'no message on both')
  assert.deepEqual([...left, ...right].sort(), [...all].sort(), 'no message lost')
}

/** The example dead letters on `<queue>.dlq`, their original queue renamed to `queue`. */
async function seedDlq(url: string, queue: string): Promise<void> {
  const file = path.join(root, `${queue}-${++counter}.jsonl`)
  writeFileSync(file, exampleDlq.map((line) => line.replaceAll('"original_queue":"orders"', `"original_queue":"${queue}"`)).join('\n') + '\n')
  const seeded = await bq(['replay', file, '--as-is', '--to', `${queue}.dlq`, '--yes', '-b', url])
  assert.equal(seeded.code, 0, seeded.stderr)
}

describe('SIGTERM and SIGHUP stop like Ctrl-C: after the batch, with the report', () => {
  test('redrive + SIGTERM: exit 143, the summary on stderr, every message on exactly one of DLQ and target', async () => {
    const {url} = freshStore()
    const total = 5000
    const published = await publish(url, 'term.dlq', total)
    // --rate 1000: the run takes about 5 s.
    const run = startBq(['dlq', 'redrive', 'term', '--to', 'term.sandbox', '--rate', '1000', '--yes', '-b', url], {env, timeoutMs: 60_000})
    await until(async () => (await depth(url, 'term.sandbox')) > 0, 'the redrive to start moving')
    run.child.kill('SIGTERM')
    const stopped = await run.done
    assert.equal(stopped.code, 143, stopped.stderr)
    assert.match(stopped.stderr, /SIGTERM: stopping after the current batch/)
    const summary = /(\d+) examined: (\d+) moved, 0 not selected, 0 poison, 0 failed; stopped early: interrupted/.exec(stopped.stderr)
    assert.ok(summary, stopped.stderr)
    assert.ok(!hasStackTrace(stopped.stderr), stopped.stderr)
    const moved = Number(summary[2])
    assert.ok(moved > 0 && moved < total, `moved ${moved}`)
    const onDlq = await ids(url, 'term.dlq')
    const onTarget = await ids(url, 'term.sandbox')
    assert.equal(onTarget.length, moved, 'the summary counts what moved')
    exactlyOnce(published, onDlq, onTarget)
  })

  test('replay --json + SIGHUP: exit 129 with the JSON report; the target holds exactly what it says was published', async () => {
    const {url} = freshStore()
    const file = path.join(root, 'hup.jsonl')
    const line = exampleDlq[0]
    writeFileSync(file, `${line}\n`.repeat(5000))
    const run = startBq(['replay', file, '--new-id', '--to', 'hup.sandbox', '--rate', '1000', '--yes', '--json', '-b', url], {env, timeoutMs: 60_000})
    await until(async () => (await depth(url, 'hup.sandbox')) > 0, 'the replay to start publishing')
    run.child.kill('SIGHUP')
    const stopped = await run.done
    assert.equal(stopped.code, 129, stopped.stderr)
    const output = jsonOutput(stopped.stdout)
    assert.equal(output.ok, false)
    assert.deepEqual(!output.ok && {code: output.error.code, exit_code: output.error.exit_code}, {code: 'interrupted', exit_code: 129})
    const report = output.result as {stop_reason: string; counts: {redriven: number}; items: Array<{id: string; outcome: string}>}
    assert.equal(report.stop_reason, 'interrupted')
    assert.ok(report.counts.redriven > 0 && report.counts.redriven < 5000, `published ${report.counts.redriven}`)
    const sent = report.items.filter((item) => item.outcome === 'redriven').map((item) => item.id)
    assert.deepEqual((await ids(url, 'hup.sandbox')).sort(), sent.sort())
  })

  test('a second SIGTERM exits at once (143); what the dead run held goes back, nothing is lost', async () => {
    const {url} = freshStore()
    const total = 5000
    const published = await publish(url, 'twice.dlq', total)
    const run = startBq(['dlq', 'redrive', 'twice', '--to', 'twice.sandbox', '--rate', '500', '--yes', '-b', url], {env, timeoutMs: 60_000})
    await until(async () => (await depth(url, 'twice.sandbox')) > 0, 'the redrive to start moving')
    run.child.kill('SIGTERM')
    await new Promise((resolve) => setTimeout(resolve, 100))
    run.child.kill('SIGTERM')
    const killed = await run.done
    assert.equal(killed.code, 143, killed.stderr)
    assert.equal((await bq(['dlq', 'recover', 'twice', '-b', url])).code, 0)
    exactlyOnce(published, await ids(url, 'twice.dlq'), await ids(url, 'twice.sandbox'))
  })

  test('publish --count streams each id as confirmed; SIGTERM stops it (143) and every message sent was printed', async () => {
    const {url} = freshStore()
    const count = 3_000_000
    const run = startBq(['publish', 'urn:babel:orders:created', '-d', '{"order_id":1}', '-q', 'stream', '--count', String(count), '-b', url], {env, timeoutMs: 120_000})
    // Ids arrive while the run goes on: the old behaviour printed them all at the end.
    await firstOutput(run.child)
    run.child.kill('SIGTERM')
    const stopped = await run.done
    assert.equal(stopped.code, 143, stopped.stderr)
    const printed = stopped.stdout.trim().split('\n')
    assert.equal(new Set(printed).size, printed.length)
    const said = /interrupted \(SIGTERM\): published (\d+) of 3000000 messages to stream on .*; the rest were not sent/.exec(stopped.stderr)
    assert.ok(said, stopped.stderr)
    assert.equal(Number(said[1]), printed.length)
    assert.ok(printed.length < count)
    assert.deepEqual((await ids(url, 'stream')).sort(), [...printed].sort(), 'what is on the queue is exactly what was printed')
  })

  test('publish --count --json + Ctrl-C: exit 130, the JSON result lists every id sent', async () => {
    const {url} = freshStore()
    const run = startBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', 'stream-json', '--count', '3000000', '--json', '-b', url], {env, timeoutMs: 120_000})
    await until(async () => (await depth(url, 'stream-json')) > 0, 'the first batch')
    run.child.kill('SIGINT')
    const stopped = await run.done
    assert.equal(stopped.code, 130, stopped.stderr)
    const output = jsonOutput(stopped.stdout)
    assert.equal(!output.ok && output.error.code, 'interrupted')
    const sent = (output.result as {ids: string[]}).ids
    assert.deepEqual((await ids(url, 'stream-json')).sort(), [...sent].sort())
  })

  test('peek --all --jsonl + SIGTERM: exit 143, the lines written are whole envelopes, and it says the export is partial', async () => {
    const {url} = freshStore()
    const total = 20_000
    await publish(url, 'export', total)
    const run = startBq(['peek', 'export', '--all', '--jsonl', '-b', url], {env, timeoutMs: 60_000})
    // Stop reading: the pipe fills and the export waits on it, part-way.
    await firstOutput(run.child)
    run.child.stdout.pause()
    await new Promise((resolve) => setTimeout(resolve, 300))
    run.child.kill('SIGTERM')
    await new Promise((resolve) => setTimeout(resolve, 100))
    run.child.stdout.resume()
    const stopped = await run.done
    assert.equal(stopped.code, 143, stopped.stderr)
    assert.match(stopped.stderr, /interrupted \(SIGTERM\) after (\d+) message\(s\): the output is partial/)
    const lines = stopped.stdout.trimEnd().split('\n')
    assert.ok(lines.length > 0 && lines.length < total, `${lines.length} lines`)
    for (const line of lines) assert.equal((JSON.parse(line) as {job: string}).job, 'urn:babel:orders:created')
    const shown = Number(/after (\d+) message/.exec(stopped.stderr)?.[1])
    assert.equal(shown, lines.length)
  })
})

describe('bytes stay bytes', () => {
  test('peek --raw writes a binary body exactly', async () => {
    const {url, file} = freshStore()
    await publish(url, 'raw', 1)
    const binary = Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x41, 0xc3, 0x28, 0x0a, 0x7f])
    const db = new Database(file)
    try {
      db.prepare('INSERT INTO messages (queue, body, headers, enqueued_at, available_at) VALUES (?, ?, ?, ?, ?)').run('raw', binary, '{}', Date.now(), 0)
    } finally {
      db.close()
    }
    const json = jsonResult((await bq(['peek', 'raw', '--json', '-b', url])).stdout).messages as Array<{body: string; body_encoding: string}>
    const first = Buffer.from(json[0].body, 'utf8')
    const run = spawnSync(process.execPath, [binRun, 'peek', 'raw', '--raw', '-b', url], {env: {...process.env, NO_COLOR: '1', ...env}})
    assert.equal(run.status, 0, run.stderr.toString())
    assert.ok(Buffer.isBuffer(run.stdout))
    assert.deepEqual(run.stdout, Buffer.concat([first, Buffer.from('\n'), binary, Buffer.from('\n')]))
  })

  test('publish refuses --data-file (and stdin) that is not UTF-8: exit 2, one line, nothing published', async () => {
    const {url} = freshStore()
    const file = path.join(root, 'latin1.json')
    const bytes = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xe9, 0xff]), Buffer.from('"}')])
    writeFileSync(file, bytes)
    const validate = await bq(['validate', file])
    assert.match(validate.stdout, /encoding\.not_utf8/)
    const run = await bq(['publish', 'urn:babel:orders:created', '--data-file', file, '-q', 'latin', '-b', url])
    assert.equal(run.code, 2, run.stderr)
    oneLine(run.stderr)
    assert.match(run.stderr, /^Error: --data-file .*latin1\.json is not valid UTF-8/)
    const json = jsonOutput((await bq(['publish', 'urn:babel:orders:created', '--data-file', file, '-q', 'latin', '-b', url, '--json'])).stdout)
    assert.equal(!json.ok && json.error.code, 'encoding.not_utf8')
    const piped = await bq(['publish', 'urn:babel:orders:created', '-q', 'latin', '-b', url], {stdin: bytes})
    assert.equal(piped.code, 2, piped.stderr)
    assert.match(piped.stderr, /^Error: stdin is not valid UTF-8/)
    assert.equal(await depth(url, 'latin'), 0)
  })
})

describe('the confirmation and the arguments say what they mean', () => {
  test('the redrive question states the DLQ depth, and with --select does not claim that many will move', async () => {
    const {url} = freshStore()
    await seedDlq(url, 'ask')
    const plain = await bq(['dlq', 'redrive', 'ask', '-b', url])
    assert.equal(plain.code, 2)
    assert.match(plain.stderr, /^Error: Redrive up to 4 message\(s\) from ask\.dlq on sqlite:.* to their original queues: not on a terminal/)
    const capped = await bq(['dlq', 'redrive', 'ask', '--max', '2', '-b', url])
    assert.match(capped.stderr, /^Error: Redrive up to 2 of the 4 message\(s\) from ask\.dlq/)
    const selected = await bq(['dlq', 'redrive', 'ask', '--select', 'reason=failed', '--to', 'ask.sandbox', '-b', url])
    assert.equal(selected.code, 2)
    oneLine(selected.stderr)
    assert.doesNotMatch(selected.stderr, /Redrive (up to )?4 message/)
    assert.match(selected.stderr, /ask\.dlq on sqlite:.* holds 4 message\(s\); how many match is decided as they are read\. Redrive those matching reason=failed to ask\.sandbox: not on a terminal, so nothing was changed/)
    assert.equal(await depth(url, 'ask.dlq'), 4)
  })

  test('an empty --to, --dlq, --queue, --broker or --to-broker (an unset variable) is a usage error: exit 2, nothing changed', async () => {
    const {url} = freshStore()
    await seedDlq(url, 'empty')
    const file = path.join(root, 'empty.jsonl')
    writeFileSync(file, `${exampleDlq[0]}\n`)
    const cases: Array<[string, string[]]> = [
      ['--to', ['dlq', 'redrive', 'empty', '--to', '', '--yes', '-b', url]],
      ['--to', ['dlq', 'redrive', 'empty', '--to=', '--yes', '-b', url]],
      ['--to', ['replay', file, '--to', '', '--yes', '-b', url]],
      ['--dlq', ['dlq', 'redrive', 'empty', '--dlq', '', '--yes', '-b', url]],
      ['--dlq', ['dlq', 'inspect', 'empty', '--dlq', '', '-b', url]],
      ['--queue', ['publish', 'urn:babel:orders:created', '-d', '{}', '--queue', '', '-b', url]],
      ['--queue', ['publish', 'urn:babel:orders:created', '-d', '{}', '-q', '  ', '-b', url]],
      ['--to-broker', ['dlq', 'redrive', 'empty', '--to-broker', '', '--yes', '-b', url]],
      ['--broker', ['dlq', 'redrive', 'empty', '--yes', '-b', '']],
    ]
    for (const [flag, args] of cases) {
      const run = await bq(args)
      assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`)
      oneLine(run.stderr)
      assert.match(run.stderr, new RegExp(`^Error: ${flag} is empty \\(an unset shell variable\\?\\)`))
      const json = jsonOutput((await bq([...args, '--json'])).stdout)
      assert.equal(!json.ok && json.error.code, 'usage')
    }
    assert.equal(await depth(url, 'empty.dlq'), 4)
    assert.equal(await depth(url, 'empty'), 0)
    assert.equal(await depth(url, 'default'), 0)
  })

  test('publish refuses a queue name where the URN goes, pointing at --queue', async () => {
    const {url} = freshStore()
    const run = await bq(['publish', 'orders', '-d', '{}', '-b', url])
    assert.equal(run.code, 2, run.stderr)
    oneLine(run.stderr)
    assert.match(run.stderr, /^Error: "orders" is not a URN .*--queue orders/)
    for (const notUrn of ['urn:babel', 'urn:', 'babel:orders:created', 'orders.created']) {
      const refused = await bq(['publish', notUrn, '-d', '{}', '-q', 'orders', '-b', url])
      assert.equal(refused.code, 2, `${notUrn}: ${refused.stderr}`)
    }
    assert.equal(await depth(url, 'default'), 0)
    assert.equal(await depth(url, 'orders'), 0)
    const ok = await bq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', 'orders', '-b', url])
    assert.equal(ok.code, 0, ok.stderr)
  })

  test('Ctrl-C at the confirmation prompt: exit 130, one "interrupted" line, nothing changed', async (t: TestContext) => {
    if (spawnSync('script', ['--version']).status !== 0) {
      t.skip('util-linux script is not installed (needed for a pseudo-terminal)')
      return
    }
    const {url} = freshStore()
    await seedDlq(url, 'prompt')
    const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`
    const command = [process.execPath, binRun, 'dlq', 'redrive', 'prompt', '-b', url].map(quote).join(' ')
    // script runs bq on a pseudo-terminal, so bq asks; -e returns bq's exit code.
    const child = spawn('script', ['-qec', command, '/dev/null'], {env: {...process.env, NO_COLOR: '1', ...env}, stdio: ['pipe', 'pipe', 'pipe']})
    let screen = ''
    const done = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        screen += chunk.toString('utf8')
        if (screen.includes('(y/N)')) resolve()
      })
    })
    child.stdin.write('\x03')
    const code = await done
    clearTimeout(timer)
    assert.equal(code, 130, screen)
    assert.match(screen, /Error: interrupted at the confirmation prompt: nothing was changed/)
    assert.doesNotMatch(screen, /unexpected error/)
    assert.ok(!hasStackTrace(screen), screen)
    assert.equal(await depth(url, 'prompt.dlq'), 4)
  })
})

describe('a peek export cut short says so', () => {
  test('stopping at the default --limit with more waiting warns (stderr and JSON warnings); --all and --limit 0 read everything', async () => {
    const {url} = freshStore()
    await publish(url, 'many', 25)
    const jsonl = await bq(['peek', 'many', '--jsonl', '-b', url])
    assert.equal(jsonl.code, 0, jsonl.stderr)
    assert.equal(jsonl.stdout.trim().split('\n').length, 10)
    assert.match(jsonl.stderr, /Warning: the export is partial: it stopped at the default --limit 10 while many holds more; add --limit N, or --all \(same as --limit 0\)/)
    const raw = await bq(['peek', 'many', '--raw', '-b', url])
    assert.match(raw.stderr, /Warning: the export is partial/)
    const json = jsonOutput((await bq(['peek', 'many', '--json', '-b', url])).stdout)
    assert.equal(json.ok, true)
    assert.equal(json.warnings.length, 1)
    assert.match(json.warnings[0], /the export is partial/)

    for (const all of [['--all'], ['--limit', '0']]) {
      const run = await bq(['peek', 'many', '--jsonl', ...all, '-b', url])
      assert.equal(run.code, 0, run.stderr)
      assert.equal(run.stdout.trim().split('\n').length, 25)
      assert.doesNotMatch(run.stderr, /Warning/)
    }
    // An explicit --limit is what the operator asked for: no warning.
    const explicit = await bq(['peek', 'many', '--jsonl', '--limit', '5', '-b', url])
    assert.equal(explicit.stdout.trim().split('\n').length, 5)
    assert.doesNotMatch(explicit.stderr, /Warning/)
    // Exactly the default number waiting: the export is whole.
    await publish(url, 'ten', 10)
    const whole = await bq(['peek', 'ten', '--jsonl', '-b', url])
    assert.doesNotMatch(whole.stderr, /Warning/)
    assert.equal(jsonOutput((await bq(['peek', 'ten', '--json', '-b', url])).stdout).warnings.length, 0)
  })
})
