import assert from 'node:assert/strict'
import {existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {after, describe, it} from 'node:test'

import {openBroker} from '../../../src/lib/brokers/registry.js'
import {BqError, ExitCode} from '../../../src/lib/errors.js'
import {assertBodies, brokerContractSuite, fields, numbered, out} from '../../suites/contract-suite.js'
import {runFixture} from '../../suites/fixtures/run-fixture.js'
import {uniqueQueue} from '../../support/brokers.js'

const dir = mkdtempSync(join(tmpdir(), 'bq-sqlite-'))
mkdirSync(join(dir, 'nested'))
const url = `sqlite://${join(dir, 'nested', 'queues.db')}`
after(() => rmSync(dir, {recursive: true, force: true}))

brokerContractSuite('sqlite', {
  open: () => openBroker(url),
  available: async () => true,
  crashDrain: async (queue, take, release) => {
    await runFixture('crash-drain.ts', [url, queue, String(take), String(release)])
  },
})

describe('sqlite adapter', () => {
  it('refuses a file in a directory that does not exist, creating nothing (a typo must not start a new store)', async () => {
    const nested = join(dir, 'a', 'b', 'c.db')
    await assert.rejects(openBroker(`sqlite://${nested}`), (error: unknown) => {
      assert.ok(error instanceof BqError)
      assert.equal(error.exitCode, ExitCode.connection)
      assert.match(error.message, /does not exist/)
      return true
    })
    assert.equal(existsSync(join(dir, 'a')), false)
  })

  it('creates the default store and its directories on first use', async () => {
    const home = mkdtempSync(join(tmpdir(), 'bq-xdg-'))
    const saved = process.env.XDG_DATA_HOME
    process.env.XDG_DATA_HOME = home
    try {
      const adapter = await openBroker(`sqlite://${join(home, 'bq', 'queues.db')}`)
      await adapter.close()
      assert.ok(existsSync(join(home, 'bq', 'queues.db')))
    } finally {
      if (saved === undefined) delete process.env.XDG_DATA_HOME
      else process.env.XDG_DATA_HOME = saved
      rmSync(home, {recursive: true, force: true})
    }
  })

  it('reports an unopenable file as a connection error with the URL', async () => {
    // The "directory" is a regular file, so neither mkdir nor open can succeed.
    const file = join(dir, 'plain-file')
    writeFileSync(file, 'not a directory')
    await assert.rejects(openBroker(`sqlite://${join(file, 'x.db')}`), (error: unknown) => {
      assert.ok(error instanceof BqError)
      assert.equal(error.exitCode, ExitCode.connection)
      assert.ok(error.message.startsWith(`cannot open sqlite://${join(file, 'x.db')}: `), error.message)
      return true
    })
  })

  it('holds delayed messages back until they are due (browse, count and drain exclude them)', async () => {
    const adapter = await openBroker(url)
    try {
      const q = uniqueQueue('sqlite-delay')
      const [now, later] = numbered(2)
      await adapter.publish(q, [{...out(later), delayMs: 300}, out(now)])
      assert.equal(await adapter.count(q), 1)
      assertBodies(await adapter.browse(q, {limit: 10}), [now])
      const session = await adapter.drain(q)
      const taken = await session.next(10)
      assertBodies(taken, [now])
      await session.ack(taken)
      assert.deepEqual(await session.next(10), [])
      await session.close()
      await new Promise((resolve) => setTimeout(resolve, 350))
      assert.equal(await adapter.count(q), 1)
      assertBodies(await adapter.browse(q, {limit: 10}), [later])
    } finally {
      await adapter.close()
    }
  })

  it('stores the projected metadata as headers, with the replay marker when asked', async () => {
    const adapter = await openBroker(url)
    try {
      const q = uniqueQueue('sqlite-headers')
      await adapter.publish(q, [{...out(Buffer.from('{"a":1}'), fields()), bypass: true}, out(Buffer.from('poison'))])
      const [withFields, poison] = await adapter.browse(q, {limit: 10})
      assert.deepEqual(withFields.headers, {
        'bq-job': 'urn:babel:orders:created',
        'bq-trace-id': 'trace-1',
        'bq-message-id': 'msg-1',
        'bq-source-lang': 'node',
        'bq-attempts': 2,
        'bq-replay-bypass': '1',
      })
      assert.deepEqual(withFields.native, {job: 'urn:babel:orders:created', traceId: 'trace-1', id: 'msg-1', lang: 'node', attempts: 2, replayBypass: true})
      assert.equal(typeof withFields.enqueuedAt, 'number')
      assert.deepEqual(poison.headers, {})
      assert.deepEqual(poison.native, {})
    } finally {
      await adapter.close()
    }
  })

  it('refuses a second drain of a queue while a live one holds it, naming it', async () => {
    const first = await openBroker(url)
    const second = await openBroker(url)
    try {
      const q = uniqueQueue('sqlite-busy')
      await first.publish(q, [out(Buffer.from('{"a":1}'))])
      const session = await first.drain(q)
      await assert.rejects(second.drain(q), (error: unknown) => {
        assert.ok(error instanceof BqError)
        assert.equal(error.exitCode, ExitCode.usage)
        assert.match(error.message, new RegExp(`being drained by pid ${process.pid} on host `))
        return true
      })
      await assert.rejects(second.recover(q), /being drained/)
      await session.close()
      const again = await second.drain(q)
      assert.equal((await again.next(5)).length, 1)
      await again.close()
    } finally {
      await first.close()
      await second.close()
    }
  })

  it('refuses a move that includes a message it no longer holds, moving nothing', async () => {
    const adapter = await openBroker(url)
    try {
      const source = uniqueQueue('sqlite-move-src')
      const target = uniqueQueue('sqlite-move-dst')
      await adapter.publish(source, numbered(2).map((body) => out(body)))
      const session = await adapter.drain(source)
      const taken = await session.next(2)
      await session.ack([taken[1]])
      await assert.rejects(session.moveAtomically!(taken, target, taken.map((m) => out(m.body))), BqError)
      assert.equal(await adapter.count(target), 0)
      await session.close()
      assert.equal(await adapter.count(source), 1)
    } finally {
      await adapter.close()
    }
  })
})
