/**
 * The replay marker on a real Artemis broker (BQ_TEST_ARTEMIS_URL, default
 * artemis://bq:bq@127.0.0.1:5673): bq writes the cross-SDK `bq-replay-bypass` application
 * property (value "1") that every SDK's Artemis guard reads, and still recognises the
 * `bq_replay_bypass` spelling older bq releases wrote. A raw rhea client reads what is stored.
 */
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {after, describe, it, type TestContext} from 'node:test'

import type {Message} from 'rhea'

import type {BrokerAdapter} from '../../../src/lib/brokers/adapter.js'
import {openBroker} from '../../../src/lib/brokers/registry.js'
import {annotate, fieldsOf, make} from '../../../src/lib/envelope/index.js'
import {requireBroker, uniqueQueue} from '../../support/brokers.js'
import {runBq} from '../../support/cli.js'
import {RawClient, destroyQueues, settle} from './support.js'

const url = process.env.BQ_TEST_ARTEMIS_URL ?? 'artemis://bq:bq@127.0.0.1:5673'
const parsed = new URL(url)
const available = (t: TestContext) => requireBroker(t, 'Artemis', parsed.hostname, Number(parsed.port || 5672))

const used: string[] = []
const queue = (label: string) => {
  const q = uniqueQueue(`artemis-marker-${label}`)
  used.push(q, `${q}.dlq`)
  return q
}
const dir = mkdtempSync(join(tmpdir(), 'bq-artemis-marker-'))

after(async () => {
  rmSync(dir, {recursive: true, force: true})
  if (used.length > 0) await destroyQueues(url, used).catch(() => undefined)
})

/** Every message on the queue as the broker holds it, taken off (accepted) by a raw consumer. */
async function takeRaw(q: string, count: number): Promise<Message[]> {
  const raw = await RawClient.open(url)
  try {
    const receiver = await raw.receiver(q)
    const got = await receiver.take(count)
    for (const d of got) d.delivery.accept()
    await settle()
    await receiver.close()
    return got.map((d) => d.message)
  } finally {
    raw.close()
  }
}

function deadLettered(q: string, n: number) {
  return annotate(make('urn:babel:orders:created', `{"order_id":${n}}`, {queue: q}), {reason: 'failed', originalQueue: q, error: 'boom', failedAt: 1749132730000, attempts: 3})
}

function assertMarked(message: Message): void {
  const props = message.application_properties ?? {}
  assert.equal(props['bq-replay-bypass'], '1', JSON.stringify(props))
  assert.equal('bq_replay_bypass' in props, false, 'the old underscore spelling is not written')
}

async function withAdapter(t: TestContext, fn: (adapter: BrokerAdapter) => Promise<void>): Promise<void> {
  if (!(await available(t))) return
  const adapter = await openBroker(url)
  try {
    await fn(adapter)
  } finally {
    await adapter.close()
  }
}

describe('artemis replay marker', () => {
  it('the adapter stamps bq-replay-bypass="1" on envelopes and on poison bodies', async (t) => {
    await withAdapter(t, async (adapter) => {
      const q = queue('adapter')
      const envelope = deadLettered(q, 1)
      await adapter.publish(q, [{body: envelope.toBuffer(), fields: fieldsOf(envelope), bypass: true}, {body: Buffer.from('not json'), fields: null, bypass: true}])
      const got = await takeRaw(q, 2)
      assert.equal(got.length, 2)
      for (const message of got) assertMarked(message)
    })
  })

  it('bq dlq redrive --bypass and bq replay --bypass write bq-replay-bypass', async (t) => {
    await withAdapter(t, async (adapter) => {
      const q = queue('cli')
      const dead = deadLettered(q, 2)
      await adapter.publish(`${q}.dlq`, [{body: dead.toBuffer(), fields: fieldsOf(dead)}])
      const redriven = await runBq(['dlq', 'redrive', q, '--bypass', '--yes', '-b', url])
      assert.equal(redriven.code, 0, redriven.stderr)
      const afterRedrive = await takeRaw(q, 5)
      assert.equal(afterRedrive.length, 1)
      assertMarked(afterRedrive[0])

      const file = join(dir, 'export.jsonl')
      writeFileSync(file, `${deadLettered(q, 3).text}\n`)
      const replayed = await runBq(['replay', file, '--to', q, '--bypass', '--yes', '-b', url])
      assert.equal(replayed.code, 0, replayed.stderr)
      const afterReplay = await takeRaw(q, 5)
      assert.equal(afterReplay.length, 1)
      assertMarked(afterReplay[0])
    })
  })

  it('a message carrying the old bq_replay_bypass spelling is still a replay; one with neither is not', async (t) => {
    await withAdapter(t, async (adapter) => {
      const q = queue('legacy')
      const raw = await RawClient.open(url)
      try {
        await raw.send(q, [
          {durable: true, body: '{"n":1}', application_properties: {bq_replay_bypass: '1'}},
          {durable: true, body: '{"n":2}', application_properties: {'bq-replay-bypass': '1'}},
          {durable: true, body: '{"n":3}'},
        ])
      } finally {
        raw.close()
      }
      const seen = await adapter.browse(q, {limit: 10})
      assert.deepEqual(seen.map((m) => m.native.replayBypass), [true, true, undefined])
    })
  })
})
