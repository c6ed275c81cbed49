/**
 * Pulsar's WebSocket API never confirms an ack: when a drain's connection is lost, the acks still
 * in flight are dropped and their messages return. bq's drain then reads the subscription's cursor
 * and reports how many acks never landed (DrainSession.unlandedAcks). These tests lose acks on
 * purpose (the fault proxy holds the second half of them, then cuts the connection) and check the
 * count against what the broker actually kept, and that it becomes an upper bound, said so, when
 * the broker cannot be asked; then a redrive whose acks are lost counts them in its report.
 */
import assert from 'node:assert/strict'
import {after, describe, it} from 'node:test'
import type {TestContext} from 'node:test'

import type {BrokerAdapter} from '../../../src/lib/brokers/adapter.js'
import {openBroker} from '../../../src/lib/brokers/registry.js'
import {BqError, ConnectionError} from '../../../src/lib/errors.js'
import {redrive} from '../../../src/lib/ops/redrive.js'
import type {RedriveReport} from '../../../src/lib/ops/redrive-types.js'
import {requireBroker, uniqueQueue} from '../../support/brokers.js'
import {FaultProxy} from '../../support/fault-proxy.js'
import {census, seed} from '../../suites/crash-suite.js'
import {numbered, out, takeAll} from '../../suites/contract-suite.js'

const pulsarUrl = process.env.BQ_TEST_PULSAR_URL ?? 'pulsar://127.0.0.1:6650?admin=http://127.0.0.1:8080'
const admin = new URL(new URL(pulsarUrl).searchParams.get('admin') ?? 'http://127.0.0.1:8080')
const available = (t: TestContext) => requireBroker(t, 'Pulsar (admin/WebSocket port)', admin.hostname, Number(admin.port || 8080))
const MESSAGES = 200
/** How long the proxy holds the second half of the acks: far longer than the test takes to cut the connection. */
const HOLD_MS = 3000

const proxiedUrl = (port: number) => {
  const proxied = new URL(pulsarUrl)
  proxied.searchParams.set('admin', `${admin.protocol}//127.0.0.1:${port}`)
  return proxied.href
}

const used: string[] = []
after(async () => {
  for (const topic of used) await fetch(`${admin.origin}/admin/v2/persistent/public/default/${encodeURIComponent(topic)}?force=true`, {method: 'DELETE'}).catch(() => undefined)
})

/**
 * Seeds a topic, drains all of it through the proxy and acks it in two halves: the first reaches
 * the broker, the second is held in the proxy. Then `fault` runs and the session closes.
 */
async function loseHalfTheAcks(fault: (proxy: FaultProxy) => void) {
  const topic = uniqueQueue('pulsar-lost-acks')
  used.push(topic)
  const direct = await openBroker(pulsarUrl)
  const proxy = await FaultProxy.start(admin.hostname, Number(admin.port || 8080))
  let proxied: BrokerAdapter | undefined
  try {
    await direct.publish(topic, numbered(MESSAGES).map((body) => out(body)))
    proxied = await openBroker(proxiedUrl(proxy.port), {timeoutSeconds: 3})
    const session = await proxied.drain(topic)
    const taken = await takeAll(session, 100)
    assert.equal(taken.length, MESSAGES)
    const half = MESSAGES / 2
    await session.ack(taken.slice(0, half))
    // Landed: the backlog (the broker's own count) shows the first half gone.
    const deadline = Date.now() + 10_000
    while ((await direct.count(topic)) > MESSAGES - half && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
    proxy.delay(HOLD_MS)
    await session.ack(taken.slice(half))
    fault(proxy)
    const closed = await session.close().then(
      () => undefined,
      (error: unknown) => error,
    )
    return {session, closed, direct, topic, proxy}
  } finally {
    await proxied?.close().catch(() => undefined)
  }
}

describe('Pulsar acks lost with the connection', () => {
  it(`a blip: close counts exactly the acks the cursor does not show, and they are the messages back on the topic`, {timeout: 60_000}, async (t) => {
    if (!(await available(t))) return
    const {session, closed, direct, topic, proxy} = await loseHalfTheAcks((p) => {
      // The held acks go with the connections; new ones (the admin API's) are not slowed.
      p.reset()
      p.delay(0)
    })
    try {
      const unlanded = session.unlandedAcks
      const back = await direct.count(topic)
      t.diagnostic(`unlanded ${JSON.stringify(unlanded)}; back on the topic: ${back}`)
      assert.ok(unlanded !== undefined && unlanded.exact, `an exact count: ${JSON.stringify(unlanded)}`)
      assert.equal(unlanded.sent, MESSAGES)
      assert.equal(unlanded.count, back, 'the count is the messages the broker kept')
      assert.equal(back, MESSAGES / 2, 'the held half never landed')
      // A run that had otherwise ended well still stops with exit 4, saying what happened.
      assert.ok(closed instanceof ConnectionError, String(closed))
      assert.match(closed.message, /100 of the 200 acknowledgements bq sent never reached subscription bq-redrive/)
    } finally {
      await proxy.close()
      await direct.close()
    }
  })

  it('a blip and then no answer from the admin API: every sent ack is counted, an upper bound said to be one', {timeout: 60_000}, async (t) => {
    if (!(await available(t))) return
    const {session, closed, direct, topic, proxy} = await loseHalfTheAcks((p) => {
      p.reset()
      p.blackhole(true)
    })
    try {
      const unlanded = session.unlandedAcks
      t.diagnostic(`unlanded ${JSON.stringify(unlanded)}; back on the topic: ${await direct.count(topic)}`)
      assert.ok(unlanded !== undefined && !unlanded.exact, `an upper bound: ${JSON.stringify(unlanded)}`)
      assert.equal(unlanded.count, MESSAGES)
      assert.ok(closed instanceof ConnectionError, String(closed))
      assert.match(closed.message, /could not be checked .*up to 200 messages/)
    } finally {
      await proxy.close()
      await direct.close()
    }
  })

  it('a redrive whose acks are lost mid-run: possible_duplicates is exactly the messages now on both the DLQ and the target', {timeout: 120_000}, async (t) => {
    if (!(await available(t))) return
    const queue = uniqueQueue('pulsar-lost-acks-redrive')
    const dlq = `${queue}.dlq`
    used.push(queue, dlq)
    const direct = await openBroker(pulsarUrl)
    const proxy = await FaultProxy.start(admin.hostname, Number(admin.port || 8080))
    // The DLQ is read through the proxy, the copies go straight to the broker: only acks are held.
    const source = await openBroker(proxiedUrl(proxy.port), {timeoutSeconds: 3})
    try {
      const ids = await seed(direct, queue, dlq, MESSAGES)
      let moved = 0
      let report: RedriveReport | undefined
      try {
        await redrive({
          source,
          target: direct,
          dlq,
          selectors: [],
          max: 0,
          dryRun: false,
          bypass: false,
          onItem: (item) => {
            if (item.outcome !== 'redriven') return
            moved++
            // Batches of 1, 4 and 16 land; the acks of the next one (64) are held, then cut off.
            if (moved === 21) proxy.delay(HOLD_MS)
            if (moved === 85) {
              proxy.reset()
              proxy.delay(0)
            }
          },
        })
        assert.fail('the redrive should have lost its drain connection')
      } catch (error) {
        assert.ok(error instanceof BqError && error.exitCode === 4, String(error))
        report = error.result as RedriveReport
      }
      const seen = await census(direct, [dlq, queue])
      const onBoth = [...seen.values()].filter((n) => n > 1).length
      t.diagnostic(`moved ${report.counts.redriven}; possible_duplicates ${report.possible_duplicates}; on both ${onBoth}; stop reason: ${report.stop_reason}`)
      assert.equal(seen.size, ids.size, 'nothing lost')
      assert.ok(onBoth > 0, 'acks were lost')
      assert.equal(report.possible_duplicates, onBoth, 'the report counts exactly the messages on both')
    } finally {
      await source.close().catch(() => undefined)
      await proxy.close()
      await direct.close()
    }
  })
})
