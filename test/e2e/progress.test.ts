/**
 * Progress on stderr for long runs (docs/output-and-exit-codes.md): on a terminal a throttled line with the
 * count, rate and, when the total is known, the ETA (moved/failed/left for moves), cleared at
 * the end; nothing when stderr is not a terminal or under --json. And `--list` lines stream as
 * the run goes instead of waiting for its end.
 */
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {runBq, startBq} from '../support/cli.js'
import {hasScript, onTerminal} from '../support/terminal.js'

let dir: string
let url: string
let env: NodeJS.ProcessEnv
const URN = 'urn:babel:orders:created'

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-progress-'))
  url = `sqlite://${path.join(dir, 'q.db')}`
  env = {XDG_DATA_HOME: dir, BQ_BROKER: '', XDG_CONFIG_HOME: path.join(dir, 'config')}
})
after(() => rmSync(dir, {recursive: true, force: true}))

function needTerminal(t: TestContext): boolean {
  if (hasScript) return true
  t.skip('util-linux script is not installed (needed for a pseudo-terminal)')
  return false
}

// eslint-disable-next-line no-control-regex -- the terminal's escape sequences
const plain = (screen: string) => screen.replace(/\x1B\[[0-9;?]*[A-Za-z]|\x1B[78]/g, '\n')

describe('progress on a terminal', () => {
  test('publish --count shows count, rate and ETA on stderr, and clears it at the end', async (t) => {
    if (!needTerminal(t)) return
    const {code, screen} = await onTerminal(['publish', URN, '-d', '{}', '-q', 'p1', '-b', url, '--count', '20000'], {env, redirect: '> /dev/null'})
    assert.equal(code, 0, screen)
    const text = plain(screen)
    assert.match(text, /\d+\/20000 published \| [\d.]+\/s \| ETA \d/)
    // Cleared (carriage return to column 1, erase the line) before the summary.
    assert.ok(screen.includes('\x1B[2Kpublished 20000 messages to p1'), screen)
  })

  test('a redrive shows moved, failed and left', async (t) => {
    if (!needTerminal(t)) return
    assert.equal((await runBq(['publish', URN, '-d', '{}', '-q', 'r1.dlq', '-b', url, '--count', '3000'], {env})).code, 0)
    const {code, screen} = await onTerminal(['dlq', 'redrive', 'r1', '--to', 'r1.back', '-b', url, '--yes'], {env})
    assert.equal(code, 0, screen)
    assert.match(plain(screen), /\d+\/3000 \| \d+ moved, 0 failed, \d+ left \| [\d.]+\/s \| ETA/)
    assert.match(screen, /3000 examined: 3000 moved/)
  })

  test('a dry run counts what would move, never "moved"', async (t) => {
    if (!needTerminal(t)) return
    assert.equal((await runBq(['publish', URN, '-d', '{}', '-q', 'd1.dlq', '-b', url, '--count', '3000'], {env})).code, 0)
    const {code, screen} = await onTerminal(['dlq', 'redrive', 'd1', '--to', 'd1.back', '-b', url, '--dry-run'], {env, redirect: '> /dev/null'})
    assert.equal(code, 0, screen)
    assert.match(plain(screen), /\d+\/3000 \| \d+ would be moved, 0 failed, \d+ left/)
    assert.doesNotMatch(plain(screen), /\d+ moved,/)
  })

  test('a peek export to a file shows "exported"; --json shows nothing', async (t) => {
    if (!needTerminal(t)) return
    const out = path.join(dir, 'export.jsonl')
    const exported = await onTerminal(['peek', 'r1.back', '-b', url, '--jsonl', '--all'], {env, redirect: `> ${out}`})
    assert.equal(exported.code, 0, exported.screen)
    assert.match(plain(exported.screen), /\d+\/3000 exported/)
    const json = await onTerminal(['publish', URN, '-d', '{}', '-q', 'p2', '-b', url, '--count', '5000', '--json'], {env, redirect: '> /dev/null'})
    assert.equal(json.code, 0, json.screen)
    assert.doesNotMatch(json.screen, /published \|/)
  })
})

describe('no progress off a terminal', () => {
  test('piped stderr gets the summary only, no escape codes', async () => {
    const result = await runBq(['publish', URN, '-d', '{}', '-q', 'p3', '-b', url, '--count', '5000'], {env})
    assert.equal(result.code, 0, result.stderr)
    // The summary, and the run ledger's one line.
    const [summary, recorded, rest] = result.stderr.split('\n')
    assert.equal(summary, `published 5000 messages to p3 on ${url}`)
    assert.match(recorded, /^recorded as run [0-9a-f-]{36} \(bq runs show [0-9a-f]{8}\)$/)
    assert.equal(rest, '')
    assert.ok(!result.stderr.includes('\x1B'), result.stderr)
  })
})

describe('--list streams', () => {
  test('redrive --list prints lines while the run goes on, not only at its end', async () => {
    assert.equal((await runBq(['publish', URN, '-d', '{}', '-q', 'l1.dlq', '-b', url, '--count', '60'], {env})).code, 0)
    // --rate 20 makes the 60 messages take about 3 s, batch by batch.
    const {child, done} = startBq(['dlq', 'redrive', 'l1', '--to', 'l1.back', '--rate', '20', '--list', '-b', url, '--yes'], {env})
    let early = ''
    child.stdout.on('data', (chunk: Buffer) => {
      if (child.exitCode === null) early += chunk.toString('utf8')
    })
    const result = await done
    assert.equal(result.code, 0, result.stderr)
    assert.match(early, /^moved\t/m, 'some lines came out before the run ended')
    assert.equal(result.stdout.trim().split('\n').length, 60)
  })
})
