// @test-uses redis
/**
 * Queue-name completion: `bq __complete-queues` prints the broker's queue names one per line,
 * and nothing (exit 0) on any failure; the documented bash snippet, run in a real bash, offers
 * them for `<queue>` and the queue flags and hands everything else to the plugin's function.
 */
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {requireBroker, uniqueQueue} from '../support/brokers.js'
import {binRun, runBq} from '../support/cli.js'
import {repoRoot} from '../support/conformance.js'

const redisUrl = process.env.BQ_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0'
let dir: string
let sqliteUrl: string

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-complete-'))
  sqliteUrl = `sqlite://${path.join(dir, 'q.db')}`
})
after(() => rmSync(dir, {recursive: true, force: true}))

async function publish(url: string, queue: string): Promise<void> {
  const result = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '-b', url])
  assert.equal(result.code, 0, result.stderr)
}

/** The documented bash snippet (docs/contexts-and-completion.md: the code block after its marker comment). */
function bashSnippet(): string {
  const page = readFileSync(path.join(repoRoot, 'docs', 'contexts-and-completion.md'), 'utf8')
  const match = /<!-- bq-queue-completion:bash -->\n```bash\n([\s\S]*?)```/.exec(page)
  assert.ok(match, 'docs/contexts-and-completion.md has the bash queue-completion snippet')
  return match[1]
}

/** Runs the snippet's function in bash for a command line whose last word is being completed. */
function complete(words: string[]): string[] {
  const script = [
    `bq() { '${process.execPath}' '${binRun}' "$@"; }`,
    // Stands for the plugin's own function: the snippet hands it every other position.
    '_bq_autocomplete() { COMPREPLY=(PLUGIN); }',
    bashSnippet(),
    `COMP_WORDS=(${words.map((word) => `'${word}'`).join(' ')}); COMP_CWORD=${words.length - 1}`,
    '_bq_with_queues',
    'printf "%s\\n" "${COMPREPLY[@]}"',
  ].join('\n')
  const result = spawnSync('bash', ['-c', script], {encoding: 'utf8', env: {...process.env, BQ_BROKER: '', XDG_CONFIG_HOME: path.join(dir, 'no-config')}})
  assert.equal(result.status, 0, result.stderr)
  return result.stdout.split('\n').filter((line) => line !== '')
}

describe('queue-name completion', () => {
  test('embedded store: every queue name, sorted, one per line; a prefix narrows them', async () => {
    for (const queue of ['orders', 'orders.dlq', 'billing']) await publish(sqliteUrl, queue)
    const all = await runBq(['__complete-queues', '-b', sqliteUrl])
    assert.equal(all.code, 0, all.stderr)
    assert.equal(all.stderr, '')
    assert.equal(all.stdout, 'billing\norders\norders.dlq\n')
    const narrowed = await runBq(['__complete-queues', 'ord', '-b', sqliteUrl])
    assert.equal(narrowed.stdout, 'orders\norders.dlq\n')
  })

  test('Redis: the queues there, by prefix', async (t: TestContext) => {
    if (!(await requireBroker(t, 'Redis', '127.0.0.1', 6379))) return
    const queue = uniqueQueue('complete')
    await publish(redisUrl, queue)
    await publish(redisUrl, `${queue}.dlq`)
    const result = await runBq(['__complete-queues', queue, '-b', redisUrl])
    assert.equal(result.code, 0, result.stderr)
    assert.equal(result.stdout, `${queue}\n${queue}.dlq\n`)
  })

  test('silent on failure: an unreachable broker, a bad URL, an unknown flag print nothing and exit 0', async () => {
    const started = Date.now()
    for (const args of [['-b', 'redis://127.0.0.1:1/0'], ['-b', 'nope'], ['--no-such-flag']]) {
      const result = await runBq(['__complete-queues', ...args])
      assert.deepEqual([result.code, result.stdout, result.stderr], [0, '', ''], args.join(' '))
    }
    assert.ok(Date.now() - started < 15_000, 'a Tab never hangs')
  })

  test('hidden from bq --help', async () => {
    const help = await runBq(['--help'])
    assert.doesNotMatch(help.stdout, /__complete-queues/)
  })

  test("the documented bash snippet completes <queue> and queue flags on the named broker, and leaves the rest to the plugin", () => {
    assert.deepEqual(complete(['bq', 'peek', '-b', sqliteUrl, 'orders']), ['orders', 'orders.dlq'])
    assert.deepEqual(complete(['bq', 'dlq', 'redrive', 'orders', '-b', sqliteUrl, '--to', 'b']), ['billing'])
    assert.deepEqual(complete(['bq', 'dlq', 'redrive', '-b', sqliteUrl, '--y']), ['PLUGIN'])
    assert.deepEqual(complete(['bq', 'pe']), ['PLUGIN'])
  })
})
