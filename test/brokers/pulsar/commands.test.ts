/**
 * Every command end to end on Apache Pulsar (BQ_TEST_PULSAR_URL, default the standalone of
 * `test/brokers/brokers.sh start pulsar`), plus what is particular to it: peek reads through a
 * reader and leaves the subscription untouched, and a redrive leaves bq's own subscription behind.
 */
import assert from 'node:assert/strict'
import {createServer, type AddressInfo} from 'node:net'
import {describe, test} from 'node:test'
import type {TestContext} from 'node:test'

import {requireBroker, uniqueQueue} from '../../support/brokers.js'
import {runBq} from '../../support/cli.js'
import {commandSuite, json} from '../../suites/command-suite.js'

const pulsarUrl = process.env.BQ_TEST_PULSAR_URL ?? 'pulsar://127.0.0.1:6650?admin=http://127.0.0.1:8080'
const admin = new URL(new URL(pulsarUrl).searchParams.get('admin') ?? 'http://127.0.0.1:8080')
const available = (t: TestContext) => requireBroker(t, 'Pulsar (admin/WebSocket port)', admin.hostname, Number(admin.port || 8080))

commandSuite({name: 'pulsar', url: () => pulsarUrl, available})

async function subscriptions(queue: string): Promise<string[]> {
  const response = await fetch(`${admin.origin}/admin/v2/persistent/public/default/${encodeURIComponent(queue)}/subscriptions`)
  return response.ok ? ((await response.json()) as string[]) : []
}

describe('pulsar specifics through the CLI', () => {
  test('publish keeps messages for the binding subscription; peek creates no subscription; --headers shows Pulsar metadata', async (t) => {
    if (!(await available(t))) return
    const queue = uniqueQueue('pulsar-peek')
    const published = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '-b', pulsarUrl, '--count', '2'])
    assert.equal(published.code, 0, published.stderr)
    assert.deepEqual(await subscriptions(queue), ['babelqueue'])
    const peek = await json(['peek', queue, '-b', pulsarUrl, '--headers'])
    assert.equal(peek.depth, 2)
    const headers = (peek.messages as Array<{headers: Record<string, unknown>}>)[0].headers
    assert.match(String(headers.message_id), /^\d+:\d+$/)
    assert.equal((headers.properties as Record<string, string>)['bq-job'], 'urn:babel:orders:created')
    assert.deepEqual(await subscriptions(queue), ['babelqueue'], 'peek created no subscription')
  })

  test('an unreachable admin endpoint exits 4 with a one-line error', async () => {
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const {port} = server.address() as AddressInfo
    await new Promise((resolve) => server.close(resolve))
    const result = await runBq(['peek', 'orders', '-b', `pulsar://127.0.0.1:6650?admin=http://127.0.0.1:${port}&token=hunter2-secret`])
    assert.equal(result.code, 4, result.stderr)
    assert.ok(!result.stderr.includes('hunter2-secret'), result.stderr)
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
    assert.match(result.stderr, /connection refused/)
  })
})
