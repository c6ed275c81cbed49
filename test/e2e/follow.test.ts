// @test-uses redis sqs
/**
 * `bq peek --follow`: prints what is waiting, then each new message as it arrives, with the
 * same filters, consuming nothing, until Ctrl-C (exit 130) or SIGTERM (143). On the embedded
 * store and Redis (true peek); brokers where a read is a receive refuse it.
 */
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {requireBroker, uniqueQueue} from '../support/brokers.js'
import {runBq, startBq} from '../support/cli.js'

const redisUrl = process.env.BQ_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0'
const URN = 'urn:babel:orders:created'
let dir: string
let env: NodeJS.ProcessEnv

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-follow-'))
  env = {XDG_DATA_HOME: dir, BQ_BROKER: ''}
})
after(() => rmSync(dir, {recursive: true, force: true}))

async function publish(url: string, queue: string, data: string, urn = URN): Promise<void> {
  const result = await runBq(['publish', urn, '-d', data, '-q', queue, '-b', url], {env})
  assert.equal(result.code, 0, result.stderr)
}

/** Resolves once `predicate` holds for the text seen so far (or fails after 15 s). */
function waitFor(read: () => string, predicate: (text: string) => boolean): Promise<void> {
  const until = Date.now() + 15_000
  return new Promise((resolve, reject) => {
    const check = () => {
      if (predicate(read())) resolve()
      else if (Date.now() > until) reject(new Error(`timed out; seen: ${read()}`))
      else setTimeout(check, 50)
    }
    check()
  })
}

const lines = (text: string) => text.split('\n').filter((line) => line !== '')

async function followsNewMessages(url: string, queue: string, signal: NodeJS.Signals, exitCode: number): Promise<void> {
  await publish(url, queue, '{"n":1}')
  await publish(url, queue, '{"n":2}', 'urn:babel:orders:cancelled')
  const {child, done} = startBq(['peek', queue, '--follow', '--jsonl', '--urn', 'urn:babel:orders:created', '-b', url], {env})
  let seen = ''
  child.stdout.on('data', (chunk: Buffer) => (seen += chunk.toString('utf8')))
  await waitFor(() => seen, (text) => lines(text).length === 1)
  await publish(url, queue, '{"n":3}')
  await publish(url, queue, '{"n":4}', 'urn:babel:orders:cancelled')
  await publish(url, queue, '{"n":5}')
  await waitFor(() => seen, (text) => lines(text).length === 3)
  child.kill(signal)
  const result = await done
  assert.equal(result.code, exitCode, result.stderr)
  assert.deepEqual(lines(result.stdout).map((line) => JSON.parse(line).data.n), [1, 3, 5])
  assert.match(result.stderr, new RegExp(`stopped following ${queue} .*\\(${signal}\\): 3 message\\(s\\) shown, 5 scanned`))
  // Nothing was consumed.
  const depth = await runBq(['peek', queue, '--all', '--jsonl', '-b', url], {env})
  assert.equal(lines(depth.stdout).length, 5)
}

describe('peek --follow', () => {
  test('embedded store: new messages appear, filtered; Ctrl-C exits 130', async () => {
    await followsNewMessages(`sqlite://${path.join(dir, 'q.db')}`, 'follow-sqlite', 'SIGINT', 130)
  })

  test('embedded store: SIGTERM exits 143', async () => {
    await followsNewMessages(`sqlite://${path.join(dir, 'q.db')}`, 'follow-term', 'SIGTERM', 143)
  })

  test('Redis: new messages appear, filtered; Ctrl-C exits 130', async (t: TestContext) => {
    if (!(await requireBroker(t, 'Redis', '127.0.0.1', 6379))) return
    await followsNewMessages(redisUrl, uniqueQueue('follow'), 'SIGINT', 130)
  })

  test('table rows when not exporting: a TSV header, then one row per message', async () => {
    const url = `sqlite://${path.join(dir, 'q.db')}`
    await publish(url, 'follow-rows', '{"n":1}')
    const {child, done} = startBq(['peek', 'follow-rows', '--follow', '-b', url], {env})
    let seen = ''
    child.stdout.on('data', (chunk: Buffer) => (seen += chunk.toString('utf8')))
    await waitFor(() => seen, (text) => lines(text).length === 2)
    child.kill('SIGINT')
    const result = await done
    assert.equal(result.code, 130, result.stderr)
    assert.match(lines(result.stdout)[0], /^#\tid\turn\t/)
    assert.match(lines(result.stdout)[1], /\turn:babel:orders:created\t/)
  })

  test('--follow with --json, or with --limit, is a usage error', async () => {
    const json = await runBq(['peek', 'q', '--follow', '--json'], {env})
    assert.equal(json.code, 2, json.stdout)
    assert.match(json.stdout, /use --follow --jsonl/)
    const limited = await runBq(['peek', 'q', '--follow', '--limit', '5'], {env})
    assert.equal(limited.code, 2, limited.stderr)
  })

  test('SQS, where a read is a receive, refuses --follow even with --receive', async (t: TestContext) => {
    if (!(await requireBroker(t, 'ElasticMQ', '127.0.0.1', 9324))) return
    const result = await runBq(['peek', 'q', '--follow', '--receive', '-b', process.env.BQ_TEST_SQS_URL ?? 'sqs://us-east-1?endpoint=http://127.0.0.1:9324'], {env: {...env, AWS_ACCESS_KEY_ID: 'x', AWS_SECRET_ACCESS_KEY: 'x'}})
    assert.equal(result.code, 2, result.stderr)
    assert.match(result.stderr, /sqs has no true peek .* --follow/)
  })
})
