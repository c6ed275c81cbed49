/**
 * One test per documented exit code (docs/output-and-exit-codes.md), through the built bin/run.js on the
 * embedded store in a temporary directory: 0, 1, 2 (usage; confirmation needed or declined), 3
 * (partial), 4 (unreachable broker), 130 (Ctrl-C).
 */
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {binRun, hasStackTrace, jsonOutput, runBq, startBq} from '../support/cli.js'
import type {CliResult} from '../support/cli.js'
import {repoRoot} from '../support/conformance.js'
import {storeDepth} from '../support/embedded-store.js'

const exampleDlq = readFileSync(path.join(repoRoot, 'examples', 'orders.dlq.jsonl'), 'utf8').trim().split('\n')
let dir: string
let url: string
/** Keeps the default embedded store (and anything else under XDG_DATA_HOME) inside the temp dir. */
let env: NodeJS.ProcessEnv

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-exit-'))
  url = `sqlite://${path.join(dir, 'q.db')}`
  env = {XDG_DATA_HOME: dir, BQ_BROKER: ''}
})
after(() => rmSync(dir, {recursive: true, force: true}))

let counter = 0
function queueName(prefix: string): string {
  return `${prefix}-${++counter}`
}

function bq(args: string[], options: {stdin?: string} = {}): Promise<CliResult> {
  return runBq(args, {env, ...options})
}

/** Puts the example dead letters (their original queue renamed to `queue`) on `<queue>.dlq`, plus `extra` lines. */
async function seedDlq(queue: string, extra: string[] = []): Promise<void> {
  const file = path.join(dir, `${queue}.jsonl`)
  writeFileSync(file, [...exampleDlq.map((line) => line.replaceAll('"original_queue":"orders"', `"original_queue":"${queue}"`)), ...extra].join('\n') + '\n')
  const seeded = await bq(['replay', file, '--as-is', '--to', `${queue}.dlq`, '--yes', '-b', url])
  assert.equal(seeded.code, 0, seeded.stderr)
}

/** A queue's depth, read in-process (a `bq peek` per check cost a start of bq, and the interrupt test polls). */
function depth(queue: string): Promise<number> {
  return storeDepth(url, queue)
}

describe('exit codes', () => {
  test('0: success (and an empty queue is success)', async () => {
    const queue = queueName('ok')
    const published = await bq(['publish', 'urn:babel:orders:created', '-d', '{"order_id":1}', '-q', queue, '-b', url])
    assert.equal(published.code, 0, published.stderr)
    assert.equal((await bq(['peek', queue, '-b', url])).code, 0)
    const empty = await bq(['dlq', 'redrive', queueName('empty'), '--yes', '-b', url])
    assert.equal(empty.code, 0, empty.stderr)
  })

  test('0: a reader that goes away (bq … | head) ends the output quietly', async () => {
    const file = path.join(dir, 'many.jsonl')
    writeFileSync(file, `${exampleDlq[0]}\n`.repeat(20_000))
    const run = startBq(['validate', file], {env})
    run.child.stdout.once('data', () => run.child.stdout.destroy())
    const result = await run.done
    assert.equal(result.code, 0, result.stderr)
    assert.equal(result.stderr, '')
  })

  test('1: validate found invalid input', async () => {
    const file = path.join(dir, 'invalid.json')
    writeFileSync(file, '{"job":"urn:babel:orders:created","data":{}}')
    const result = await bq(['validate', file])
    assert.equal(result.code, 1, result.stderr)
    assert.match(result.stdout, /1 message in 1 input: 0 valid, 1 invalid/)
    // The report already says it: no extra error line.
    assert.equal(result.stderr, '')
    const json = jsonOutput((await bq(['validate', file, '--json'])).stdout)
    assert.equal(json.ok, false)
    assert.deepEqual(!json.ok && json.error, {code: 'invalid-input', message: '1 of 1 message invalid', exit_code: 1})
  })

  test('2: a usage error', async () => {
    const result = await bq(['peek', 'orders', '--limit', 'many', '-b', url])
    assert.equal(result.code, 2)
    assert.match(result.stderr, /^Error: Parsing --limit Expected an integer but received: many/)
  })

  test('2: confirmation needed (no terminal, no --yes); nothing was changed', async () => {
    const queue = queueName('confirm')
    await seedDlq(queue)
    const redrive = await bq(['dlq', 'redrive', queue, '-b', url])
    assert.equal(redrive.code, 2, redrive.stderr)
    assert.match(redrive.stderr, /^Error: Redrive up to 4 message\(s\) from .*: not on a terminal, so nothing was changed; add --yes to proceed\n$/)
    assert.equal(await depth(`${queue}.dlq`), 4)
    const json = jsonOutput((await bq(['dlq', 'redrive', queue, '-b', url, '--json'])).stdout)
    assert.equal(!json.ok && json.error.code, 'confirmation-needed')
    const replay = await bq(['replay', path.join(dir, `${queue}.jsonl`), '--to', `${queue}.copy`, '-b', url])
    assert.equal(replay.code, 2, replay.stderr)
    assert.match(replay.stderr, /nothing was changed/)
    assert.equal(await depth(`${queue}.copy`), 0)
    const stdin = await bq(['replay', '-', '--to', `${queue}.copy`, '-b', url], {stdin: exampleDlq[0]})
    assert.equal(stdin.code, 2, stdin.stderr)
    assert.match(stdin.stderr, /needs --yes .*nothing was changed/)
  })

  test('2: a confirmation declined on a terminal; nothing was changed', async (t) => {
    if (!hasPython(t)) return
    const queue = queueName('declined')
    await seedDlq(queue)
    for (const args of [['dlq', 'redrive', queue], ['replay', path.join(dir, `${queue}.jsonl`), '--to', `${queue}.copy`]]) {
      const result = onTerminal([...args, '-b', url], 'n\r')
      assert.equal(result.code, 2, result.output)
      assert.match(result.output, /Error: not confirmed: nothing was changed/)
    }
    assert.equal(await depth(`${queue}.dlq`), 4)
    assert.equal(await depth(`${queue}.copy`), 0)
  })

  test('3: partial — a redrive that leaves selected messages unmoved, with its report', async () => {
    const queue = queueName('partial')
    // A dead letter that records no queue at all cannot be moved without --to.
    const nowhere = exampleDlq[0].replace(`"queue":"orders",`, '').replace('"original_queue":"orders",', '').replace('8fa001', '8fa0ff')
    await seedDlq(queue, [nowhere])
    const result = await bq(['dlq', 'redrive', queue, '--yes', '-b', url, '--json'])
    assert.equal(result.code, 3, result.stderr)
    const json = jsonOutput(result.stdout)
    assert.equal(json.ok, false)
    assert.deepEqual(!json.ok && json.error, {code: 'partial', message: 'not every selected message was moved: 4 moved, 1 failed', exit_code: 3})
    const report = json.result as {counts: Record<string, number>; items: Array<{id: string; outcome: string; error?: string}>}
    assert.deepEqual(report.counts, {examined: 5, redriven: 4, would_redrive: 0, skipped: 0, poison: 0, failed: 1})
    assert.equal(report.items.length, 5)
    assert.deepEqual(report.items.filter((i) => i.outcome === 'failed').map((i) => [i.id, i.error]), [['4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa0ff', 'no original queue recorded: use --to']])
    assert.equal(await depth(`${queue}.dlq`), 1)
    // In human output the summary line is the report, and each reason for a failure follows it.
    const again = await bq(['dlq', 'redrive', queue, '--yes', '-b', url])
    assert.equal(again.code, 3)
    assert.equal(again.stderr, '1 examined: 0 moved, 0 not selected, 0 poison, 1 failed\n1 failed: no original queue recorded: use --to\n--list (or --json) shows each message\n')
  })

  test('4: a broker that cannot be reached', async () => {
    const result = await bq(['peek', 'orders', '-b', 'redis://127.0.0.1:1'])
    assert.equal(result.code, 4)
    assert.match(result.stderr, /^Error: cannot connect to redis:\/\/127\.0\.0\.1:1/)
    assert.ok(!hasStackTrace(result.stderr))
  })

  test('130: Ctrl-C stops a redrive after the current batch, with the report; a second Ctrl-C exits at once', async () => {
    const queue = queueName('interrupt')
    const total = 1000
    const seeded = await bq(['publish', 'urn:babel:orders:created', '-d', '{"order_id":1}', '-q', `${queue}.dlq`, '--count', String(total), '-b', url])
    assert.equal(seeded.code, 0, seeded.stderr)

    // --rate 100 moves batches of 100, one a second: the run takes about 10 s.
    const args = ['dlq', 'redrive', queue, '--to', `${queue}.sandbox`, '--rate', '100', '--yes', '-b', url]
    const first = startBq([...args, '--json'], {env})
    await until(async () => (await depth(`${queue}.sandbox`)) > 0)
    first.child.kill('SIGINT')
    const stopped = await first.done
    assert.equal(stopped.code, 130, stopped.stderr)
    assert.match(stopped.stderr, /stopping after the current batch/)
    const json = jsonOutput(stopped.stdout)
    assert.equal(!json.ok && json.error.code, 'interrupted')
    const report = json.result as {stopped_early: boolean; stop_reason: string; counts: {redriven: number}; items: unknown[]}
    assert.equal(report.stop_reason, 'interrupted')
    assert.ok(report.counts.redriven > 0 && report.counts.redriven < total, `moved ${report.counts.redriven}`)
    assert.equal(report.items.length, report.counts.redriven)
    const moved = await depth(`${queue}.sandbox`)
    assert.equal(moved, report.counts.redriven)
    assert.equal(await depth(`${queue}.dlq`), total - moved)

    const second = startBq(args, {env})
    await until(async () => (await depth(`${queue}.sandbox`)) > moved)
    second.child.kill('SIGINT')
    await new Promise((resolve) => setTimeout(resolve, 100))
    second.child.kill('SIGINT')
    const killed = await second.done
    assert.equal(killed.code, 130, killed.stderr)
    // Nothing is lost: what the dead run had reserved goes back to the DLQ.
    assert.equal((await bq(['dlq', 'recover', queue, '-b', url])).code, 0)
    assert.equal((await depth(`${queue}.dlq`)) + (await depth(`${queue}.sandbox`)), total)
  })
})

async function until(condition: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const end = Date.now() + timeoutMs
  while (!(await condition())) {
    if (Date.now() > end) throw new Error('timed out waiting')
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

function hasPython(t: TestContext): boolean {
  if (spawnSync('python3', ['--version']).status === 0) return true
  t.skip('python3 is needed to run bq on a pseudo-terminal')
  return false
}

/** Runs bq on a pseudo-terminal (python3's pty), typing `answer` at the first question. */
function onTerminal(args: string[], answer: string): {code: number; output: string} {
  const script = `
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
out, answered, deadline = b'', False, time.time() + 30
while time.time() < deadline:
    ready, _, _ = select.select([fd], [], [], 0.2)
    if not ready:
        continue
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
    if not answered and b'?' in out:
        time.sleep(0.3)
        os.write(fd, ${JSON.stringify(answer)}.encode())
        answered = True
_, status = os.waitpid(pid, 0)
sys.stdout.write(out.decode('utf8', 'replace'))
sys.exit(os.waitstatus_to_exitcode(status))
`
  const result = spawnSync('python3', ['-c', script, process.execPath, binRun, ...args], {env: {...process.env, ...env, NO_COLOR: '1'}, encoding: 'utf8', timeout: 60_000})
  return {code: result.status ?? -1, output: result.stdout + result.stderr}
}
