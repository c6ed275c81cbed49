/**
 * The application-headers suite (issue 11): a message's own headers (W3C traceparent and the
 * like) survive a browse, a DLQ redrive, and an export → replay round trip, on one broker. Each
 * broker has a `headers.test.ts` that calls `headersSuite`; every test uses its own queues.
 */
import {describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import type {BrokerAdapter, BrokerMessage} from '../../src/lib/brokers/adapter.js'
import {openBroker} from '../../src/lib/brokers/registry.js'
import {annotate, fieldsOf, make} from '../../src/lib/envelope/index.js'
import {uniqueQueue} from '../support/brokers.js'
import {runBq} from '../support/cli.js'
import {capabilitiesOf, type BrokerCase} from './command-suite.js'

/** What every test expects back: the app headers only. */
export const APP_HEADERS = {traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', 'x-custom': 'v'}
/** What the tests publish: the app headers plus a spoof of bq's own projection, which must not win or come back. */
const PUBLISHED_HEADERS = {...APP_HEADERS, 'bq-job': 'urn:babel:spoofed:job'}
const URN = 'urn:babel:orders:created'
/** Data whose big integer and number spelling only survive if nothing re-serializes the body. */
const DATA = '{"order_id":1042,"amount":99.90,"big":9007199254740993}'

export function headersSuite(broker: BrokerCase): void {
  /** `--receive` for reads where reading has side effects (SQS). */
  let read: string[] = []
  let checked = false
  const ready = async (t: TestContext): Promise<boolean> => {
    if (!(await broker.available(t))) return false
    if (!checked) {
      read = (await capabilitiesOf(broker.url())).receiveSideEffects === true ? ['--receive'] : []
      checked = true
    }
    return true
  }
  const sub = (queue: string, suffix: string) => broker.derivedQueue?.(queue, suffix) ?? `${queue}.${suffix}`
  /** Every queue is `bqtest-hdr-…` (uniqueQueue), so a broker's test file can clean up by prefix. */
  const queueFor = (label: string) => uniqueQueue(`hdr-${label}`)
  const withAdapter = async <T>(fn: (adapter: BrokerAdapter) => Promise<T>): Promise<T> => {
    const adapter = await openBroker(broker.url())
    try {
      return await fn(adapter)
    } finally {
      await adapter.close()
    }
  }
  /** The one message in `queue` (browsing until it shows: some brokers take a moment). */
  const onlyMessage = (queue: string) =>
    withAdapter(async (adapter) => {
      for (let i = 0; i < 50; i++) {
        const found = await adapter.browse(queue, {limit: 10})
        if (found.length > 0) {
          assert.equal(found.length, 1, `one message in ${queue}`)
          return found[0]
        }
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      assert.fail(`no message showed in ${queue}`)
    })
  const assertCarried = (message: BrokerMessage, body: Buffer) => {
    assert.deepEqual(message.appHeaders, APP_HEADERS)
    assert.equal(message.native.replayBypass, undefined, 'no replay marker was asked for')
    assert.equal(message.body.toString('utf8'), body.toString('utf8'))
  }

  describe(`application headers on ${broker.name}`, () => {
    test('browse shows them, without bq\'s own projection or the replay marker', async (t) => {
      if (!(await ready(t))) return
      const queue = queueFor('browse')
      const envelope = make(URN, DATA, {queue})
      await withAdapter((adapter) => adapter.publish(queue, [{body: envelope.toBuffer(), fields: fieldsOf(envelope), bypass: true, appHeaders: PUBLISHED_HEADERS}]))
      const message = await onlyMessage(queue)
      assert.deepEqual(message.appHeaders, APP_HEADERS)
      assert.equal(message.native.replayBypass, true, 'the marker is read as the marker, not as an app header')
      if (message.native.job !== undefined) assert.equal(message.native.job, URN, "bq's projection wins over an app header of its name")
    })

    test('a dlq redrive carries them to the original queue', async (t) => {
      if (!(await ready(t))) return
      const queue = queueFor('redrive')
      const dlq = sub(queue, 'dlq')
      const dead = annotate(make(URN, DATA, {queue}), {reason: 'failed', originalQueue: queue, error: 'boom', attempts: 3})
      await withAdapter((adapter) => adapter.publish(dlq, [{body: dead.toBuffer(), fields: fieldsOf(dead), appHeaders: PUBLISHED_HEADERS}]))
      const run = await runBq(['dlq', 'redrive', queue, '--dlq', dlq, '--yes', '-b', broker.url(), ...(broker.redriveFlags ?? [])])
      assert.equal(run.code, 0, run.stderr)
      const moved = await onlyMessage(queue)
      assert.deepEqual(moved.appHeaders, APP_HEADERS)
      assert.match(moved.body.toString('utf8'), /"big":9007199254740993/)
    })

    test('peek --jsonl --with-headers → replay --restore-headers keeps them and the body bytes', async (t) => {
      if (!(await ready(t))) return
      const queue = queueFor('export')
      const envelope = make(URN, DATA, {queue})
      const body = envelope.toBuffer()
      await withAdapter((adapter) => adapter.publish(queue, [{body, fields: fieldsOf(envelope), appHeaders: PUBLISHED_HEADERS}]))
      const exported = await runBq(['peek', queue, '--jsonl', '--with-headers', '-b', broker.url(), ...read])
      assert.equal(exported.code, 0, exported.stderr)
      const line = exported.stdout.trim()
      assert.equal(line.split('\n').length, 1)
      // The envelope is spliced in as stored, byte for byte; the headers are the app headers.
      assert.ok(line.startsWith(`{"envelope":${body.toString('utf8')},"headers":`), line)
      assert.deepEqual(JSON.parse(line).headers, APP_HEADERS)

      const dir = mkdtempSync(path.join(tmpdir(), 'bq-headers-'))
      try {
        const file = path.join(dir, 'export.jsonl')
        writeFileSync(file, `${line}\n`)
        const validated = await runBq(['validate', file])
        assert.equal(validated.code, 0, validated.stdout + validated.stderr)

        const target = sub(queue, 'replayed')
        const replayed = await runBq(['replay', file, '--to', target, '--restore-headers', '--yes', '-b', broker.url()])
        assert.equal(replayed.code, 0, replayed.stderr)
        assertCarried(await onlyMessage(target), body)

        const bare = sub(queue, 'bare')
        const dropped = await runBq(['replay', file, '--to', bare, '--no-restore-headers', '--yes', '-b', broker.url()])
        assert.equal(dropped.code, 0, dropped.stderr)
        const plain = await onlyMessage(bare)
        assert.deepEqual(plain.appHeaders ?? {}, {})
        assert.equal(plain.body.toString('utf8'), body.toString('utf8'))
      } finally {
        rmSync(dir, {recursive: true, force: true})
      }
    })
  })
}
