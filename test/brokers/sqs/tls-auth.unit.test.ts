/**
 * SQS through an https:// endpoint with the URL's TLS options, and SQS's refusals: a local HTTPS
 * server (the test CA's server certificate) answers as SQS would refuse, since ElasticMQ serves
 * plain HTTP and checks no credentials. ca= makes it trusted (then its AccessDenied is exit 6
 * permission, InvalidClientTokenId exit 6 auth); without ca= one exit 4 line naming the fix.
 */
import assert from 'node:assert/strict'
import {readFileSync} from 'node:fs'
import {createServer, type Server} from 'node:https'
import type {AddressInfo} from 'node:net'
import {after, before, test} from 'node:test'

import {openBroker} from '../../../src/lib/brokers/registry.js'
import {AuthError, ConnectionError, UsageError} from '../../../src/lib/errors.js'
import {testCerts, type TestCerts} from '../../support/certs.js'

let certs: TestCerts
let server: Server
let port = 0
let answer = 'AccessDenied'

before(async () => {
  certs = testCerts()
  server = createServer({cert: readFileSync(certs.serverCert), key: readFileSync(certs.serverKey)}, (request, response) => {
    request.resume()
    request.on('end', () => {
      // SQS's JSON protocol: the error's type in __type and x-amzn-query-error.
      response.writeHead(answer === 'AccessDenied' ? 403 : 400, {'content-type': 'application/x-amz-json-1.0', 'x-amzn-query-error': `${answer};Sender`})
      response.end(JSON.stringify({__type: `com.amazonaws.sqs#${answer}`, message: answer === 'AccessDenied' ? 'Access to the resource is denied.' : 'The security token included in the request is invalid.'}))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
})

after(() => server.close())

const env = {AWS_ACCESS_KEY_ID: 'AKIDTEST', AWS_SECRET_ACCESS_KEY: 'not-a-real-secret-value'}

async function countWith(query: string): Promise<unknown> {
  const saved = {...process.env}
  Object.assign(process.env, env)
  try {
    const adapter = await openBroker(`sqs://us-east-1?endpoint=https://localhost:${port}${query}`, {timeoutSeconds: 5})
    try {
      return await adapter.count('orders')
    } finally {
      await adapter.close()
    }
  } catch (error) {
    return error
  } finally {
    process.env = saved
  }
}

test('without ca= the endpoint is untrusted: exit 4 (tls) naming ca=', async () => {
  const error = await countWith('')
  assert.ok(error instanceof ConnectionError && error.code === 'tls', String(error))
  assert.match(error.message, /TLS certificate is not trusted: pass ca=PATH/)
})

test('with ca=: AccessDenied is exit 6 permission, InvalidClientTokenId exit 6 auth; no secret shows', async () => {
  answer = 'AccessDenied'
  const denied = await countWith(`&ca=${certs.ca}`)
  assert.ok(denied instanceof AuthError, String(denied))
  assert.equal(denied.code, 'permission')
  assert.match(denied.message, /refused permission to .*IAM policy/)
  answer = 'InvalidClientTokenId'
  const invalid = await countWith(`&ca=${certs.ca}`)
  assert.ok(invalid instanceof AuthError, String(invalid))
  assert.equal(invalid.code, 'auth')
  assert.ok(!invalid.message.includes('not-a-real-secret-value'), invalid.message)
})

test('TLS options need an https:// endpoint', async () => {
  const error = await openBroker('sqs://us-east-1?endpoint=http://127.0.0.1:9324&ca=/tmp/x.pem').catch((failure: unknown) => failure)
  assert.ok(error instanceof UsageError, String(error))
  assert.match(error.message, /ca= needs TLS: use endpoint=https:\/\/HOST/)
})
