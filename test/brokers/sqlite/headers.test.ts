/** Application headers through browse, redrive (also to another broker) and export → replay on the embedded store. */
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {test} from 'node:test'

import {openBroker} from '../../../src/lib/brokers/registry.js'
import {annotate, fieldsOf, make} from '../../../src/lib/envelope/index.js'
import {runBq} from '../../support/cli.js'
import {brokerCases} from '../../suites/command-suite.js'
import {APP_HEADERS, headersSuite} from '../../suites/headers-suite.js'

headersSuite(brokerCases.sqlite)

test('sqlite: a redrive to another broker (--to-broker) carries the app headers there', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'bq-headers-cross-'))
  const from = `sqlite://${path.join(dir, 'from.db')}`
  const to = `sqlite://${path.join(dir, 'to.db')}`
  try {
    const dead = annotate(make('urn:babel:orders:created', '{"n":1}', {queue: 'orders'}), {reason: 'failed', originalQueue: 'orders'})
    const source = await openBroker(from)
    await source.publish('orders.dlq', [{body: dead.toBuffer(), fields: fieldsOf(dead), appHeaders: {...APP_HEADERS, 'bq-trace-id': 'spoof'}}])
    await source.close()
    const run = await runBq(['dlq', 'redrive', 'orders', '-b', from, '--to-broker', to, '--yes'])
    assert.equal(run.code, 0, run.stderr)
    const target = await openBroker(to)
    try {
      const [moved] = await target.browse('orders', {limit: 10})
      assert.deepEqual(moved.appHeaders, APP_HEADERS)
      assert.equal(moved.native.traceId, dead.traceId)
    } finally {
      await target.close()
    }
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
})
