/**
 * Pulsar's web port over TLS with the URL's options, and its refusals: a local HTTPS server
 * (the test CA's server certificate) plays the admin API, since no secured Pulsar runs in the
 * test services. ca= makes it trusted; without it, or for another name, one exit 4 line naming
 * the fix; HTTP 401 is exit 6 'auth' and 403 exit 6 'permission', naming the topic, never the token.
 */
import assert from 'node:assert/strict'
import {readFileSync} from 'node:fs'
import {createServer, type Server} from 'node:https'
import type {AddressInfo} from 'node:net'
import {after, before, test} from 'node:test'

import {PulsarAdmin} from '../../../src/lib/brokers/pulsar/admin.js'
import {parsePulsarUrl, topicOf} from '../../../src/lib/brokers/pulsar/url.js'
import {pulsarRefusal} from '../../../src/lib/brokers/pulsar/web-tls.js'
import {AuthError, ConnectionError, ExitCode, UsageError} from '../../../src/lib/errors.js'
import {testCerts, type TestCerts} from '../../support/certs.js'

let certs: TestCerts
let server: Server
let port = 0

before(async () => {
  certs = testCerts()
  server = createServer({cert: readFileSync(certs.serverCert), key: readFileSync(certs.serverKey)}, (request, response) => {
    const auth = request.headers.authorization
    if (auth === undefined) {
      response.writeHead(401, {'content-type': 'application/json'})
      response.end(JSON.stringify({reason: 'Authentication required'}))
    } else if (auth !== 'Bearer good-token') {
      response.writeHead(403, {'content-type': 'application/json'})
      response.end(JSON.stringify({reason: 'Client is not authorized to Get stats'}))
    } else {
      response.writeHead(200, {'content-type': 'application/json'})
      response.end(JSON.stringify({numberOfEntries: 3, cursors: {}}))
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
})

after(() => server.close())

function adminFor(query: string): {admin: PulsarAdmin; topic: ReturnType<typeof topicOf>; display: string} {
  const url = new URL(`pulsar+ssl://127.0.0.1:6651?admin=https://127.0.0.1:${port}${query}`)
  const display = url.href.replace(/token=[^&]*/, 'token=***')
  const target = {...parsePulsarUrl(url, display, {}), timeouts: {connectMs: 2000, operationMs: 2000, explicit: true}}
  return {admin: new PulsarAdmin(target, display), topic: topicOf('orders.dlq', target, display), display}
}

test('ca= trusts the test CA: the admin API answers over https', async () => {
  const {admin, topic} = adminFor(`&ca=${certs.ca}&token=good-token`)
  assert.equal((await admin.internalStats(topic))?.numberOfEntries, 3)
})

test('an untrusted certificate and a wrong server name are exit 4 (tls) lines naming the fix', async () => {
  await assert.rejects(adminFor('&token=good-token').admin.internalStats(adminFor('').topic), (error: unknown) => {
    assert.ok(error instanceof ConnectionError && error.code === 'tls', String(error))
    assert.match(error.message, /TLS certificate is not trusted: pass ca=PATH/)
    return true
  })
  const wrongName = adminFor(`&ca=${certs.ca}&servername=wrong-host.invalid&token=good-token`)
  await assert.rejects(wrongName.admin.internalStats(wrongName.topic), (error: unknown) => error instanceof ConnectionError && error.code === 'tls' && /servername=NAME/.test(error.message))
})

test('HTTP 401 is exit 6 auth (a token is wanted), 403 exit 6 permission naming the topic; the token never shows', async () => {
  const none = adminFor(`&ca=${certs.ca}`)
  await assert.rejects(none.admin.internalStats(none.topic), (error: unknown) => {
    assert.ok(error instanceof AuthError, String(error))
    assert.equal(error.exitCode, ExitCode.auth)
    assert.equal(error.code, 'auth')
    assert.match(error.message, /wants a token: pass \?token= or set BQ_PULSAR_TOKEN/)
    return true
  })
  const wrong = adminFor(`&ca=${certs.ca}&token=wrong-token-s3cret`)
  await assert.rejects(wrong.admin.internalStats(wrong.topic), (error: unknown) => {
    assert.ok(error instanceof AuthError, String(error))
    assert.equal(error.code, 'permission')
    assert.match(error.message, /orders\.dlq/)
    assert.match(error.message, /HTTP 403: Client is not authorized/)
    assert.ok(!error.message.includes('wrong-token-s3cret'), error.message)
    return true
  })
})

test('the mapping: 401 with a token is a refused token, other statuses are not refusals', () => {
  assert.equal(pulsarRefusal(401, 'x', 'read orders', 'pulsar://h', true)?.code, 'auth')
  assert.match(pulsarRefusal(401, 'x', 'read orders', 'pulsar://h', true)!.message, /refused the token/)
  assert.equal(pulsarRefusal(403, 'x', 'read orders', 'pulsar://h', true)?.code, 'permission')
  assert.equal(pulsarRefusal(404, 'x', 'read orders', 'pulsar://h', true), undefined)
})

test('TLS options without TLS are refused; unknown ones still are', () => {
  assert.throws(() => parsePulsarUrl(new URL('pulsar://127.0.0.1:6650?ca=/tmp/x.pem'), 'pulsar://127.0.0.1:6650', {}), (error: unknown) => error instanceof UsageError && /ca= needs TLS: use pulsar\+ssl:\/\/ or admin=https:/.test(error.message))
  assert.throws(() => parsePulsarUrl(new URL('pulsar+ssl://127.0.0.1:6651?cafile=/tmp/x.pem'), 'pulsar+ssl://127.0.0.1:6651', {}), UsageError)
})
