/**
 * `bq fish-completion`: the script it prints, sourced in a real fish, completes commands, topics,
 * flags (after the queue too) and queue names from the broker the command line names.
 */
import {after, before, describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {spawnSync} from 'node:child_process'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {binRun, runBq} from '../support/cli.js'

const hasFish = spawnSync('fish', ['--version']).status === 0
// Under CI a missing fish is a failure, never a skip (scripts/services.sh installs it).
const noFish = process.env.CI === 'true' ? false : 'fish is not installed'

let dir: string
let script: string
let sqliteUrl: string

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-fish-'))
  sqliteUrl = `sqlite://${path.join(dir, 'q.db')}`
  const printed = await runBq(['fish-completion'])
  assert.equal(printed.code, 0, printed.stderr)
  script = path.join(dir, 'bq.fish')
  writeFileSync(script, printed.stdout)
})
after(() => rmSync(dir, {recursive: true, force: true}))

/** What fish offers for `line` (candidates only, descriptions dropped). */
function complete(line: string): string[] {
  const program = [`function bq; ${JSON.stringify(process.execPath)} ${JSON.stringify(binRun)} $argv; end`, `source ${JSON.stringify(script)}`, `complete -C ${JSON.stringify(line)}`].join('\n')
  const result = spawnSync('fish', ['--no-config', '-c', program], {encoding: 'utf8', env: {...process.env, BQ_BROKER: '', NO_COLOR: '1'}})
  assert.equal(result.status, 0, result.stderr)
  return result.stdout.split('\n').filter(Boolean).map((entry) => entry.split('\t')[0])
}

describe('fish completion', {skip: hasFish ? false : noFish}, () => {
  test('commands and topics, then a topic\'s commands', () => {
    const top = complete('bq ')
    for (const word of ['peek', 'publish', 'dlq', 'replay', 'validate', 'runs', 'context']) assert.ok(top.includes(word), `${word} in ${top.join(' ')}`)
    assert.ok(!top.includes('__complete-queues'), 'hidden commands are not offered')
    assert.deepEqual(complete('bq dlq re').sort(), ['recover', 'redrive'])
  })

  test('a command\'s flags, before and after its queue argument', () => {
    assert.deepEqual(complete('bq dlq redrive orders --dry'), ['--dry-run'])
    assert.ok(complete('bq peek --').includes('--jsonl'))
  })

  test('queue names from the broker the command line names', async () => {
    for (const queue of ['orders', 'orders.dlq', 'payments']) {
      const published = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '-b', sqliteUrl])
      assert.equal(published.code, 0, published.stderr)
    }
    assert.deepEqual(complete(`bq dlq redrive -b ${sqliteUrl} ord`), ['orders', 'orders.dlq'])
    assert.deepEqual(complete(`bq peek --broker=${sqliteUrl} pay`), ['payments'])
  })
})
