/**
 * A Pulsar broker that has just restarted answers 5xx while it loads a topic: the admin calls
 * wait that out within the operation timeout, and a 5xx that lasts is exit 4 (not-ready.ts).
 * The real case is in restart.test.ts (a rerun right after a SIGKILLed broker is back); here a
 * local HTTP server plays the admin API so the tries can be counted.
 */
import assert from 'node:assert/strict'
import {createServer, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'
import {test} from 'node:test'

import {PulsarAdmin} from '../../../src/lib/brokers/pulsar/admin.js'
import {BrokerNotReadyError, untilReady} from '../../../src/lib/brokers/pulsar/not-ready.js'
import {parsePulsarUrl, topicOf} from '../../../src/lib/brokers/pulsar/url.js'
import {ExitCode} from '../../../src/lib/errors.js'

/** An admin API that answers `status` to the first `failures` requests, then stats. */
async function adminApi(failures: number, status = 500): Promise<{server: Server; port: number; requests: () => number}> {
  let requests = 0
  const server = createServer((_request, response) => {
    requests++
    if (requests <= failures) {
      response.writeHead(status, {'content-type': 'application/json'})
      response.end(JSON.stringify({reason: 'Topic is being loaded'}))
      return
    }
    response.writeHead(200, {'content-type': 'application/json'})
    response.end(JSON.stringify({numberOfEntries: 3, cursors: {}}))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {server, port: (server.address() as AddressInfo).port, requests: () => requests}
}

function adminAt(port: number, operationMs: number): {admin: PulsarAdmin; topic: ReturnType<typeof topicOf>} {
  const url = new URL(`pulsar://127.0.0.1:6650?admin=http://127.0.0.1:${port}`)
  const target = {...parsePulsarUrl(url, url.href), timeouts: {connectMs: 1000, operationMs, explicit: true}}
  return {admin: new PulsarAdmin(target, url.href), topic: topicOf('orders.dlq', target, url.href)}
}

test('a broker that answers 500 and then serves the topic: the call succeeds after the tries', async () => {
  const api = await adminApi(3)
  try {
    const {admin, topic} = adminAt(api.port, 10_000)
    const stats = await admin.internalStats(topic)
    assert.equal(stats?.numberOfEntries, 3)
    assert.equal(api.requests(), 4)
  } finally {
    api.server.close()
  }
})

test('a 503 that lasts past the operation timeout is exit 4, in one line that says what to do', async () => {
  const api = await adminApi(Number.MAX_SAFE_INTEGER, 503)
  try {
    const {admin, topic} = adminAt(api.port, 1200)
    const started = Date.now()
    await assert.rejects(admin.internalStats(topic), (error: unknown) => {
      assert.ok(error instanceof BrokerNotReadyError)
      assert.equal(error.exitCode, ExitCode.connection)
      assert.match(error.message, /still answered HTTP 503 after 1 s of tries .*--timeout waits longer.*Topic is being loaded/)
      assert.doesNotMatch(error.message, /\n/)
      return true
    })
    assert.ok(Date.now() - started < 5000, 'gives up near the operation timeout')
    assert.ok(api.requests() >= 3, `tried ${api.requests()} times`)
  } finally {
    api.server.close()
  }
})

test('other answers are not tried again', async () => {
  const api = await adminApi(1, 400)
  try {
    const {admin, topic} = adminAt(api.port, 10_000)
    await assert.rejects(admin.internalStats(topic), /HTTP 400/)
    assert.equal(api.requests(), 1)
  } finally {
    api.server.close()
  }
})

test('untilReady stops at the first ready answer and keeps the last one when time runs out', async () => {
  let calls = 0
  assert.equal(await untilReady(async () => ++calls, (n) => n < 3, 10_000), 3)
  calls = 0
  assert.equal(await untilReady(async () => ++calls, () => true, 0), 1)
})
