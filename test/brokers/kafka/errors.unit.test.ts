/**
 * How Kafka failures become exit codes (kafka/client/errors.ts), on kafkajs's own error objects: the ACL
 * refusals each name their resource and operation, a SASL failure is exit 6 at connect and mid-run,
 * and a connection closed at connect names the SASL or TLS option the URL lacks. The broker-facing
 * cases run for real in secure.test.ts; this covers the ones a single test broker cannot show
 * (cluster and transactional-id ACLs, a SASL failure on a later connection).
 */
import assert from 'node:assert/strict'
import {createRequire} from 'node:module'
import {describe, test} from 'node:test'

import kafkajs from 'kafkajs'

import {connectFailure, kafkaFailure} from '../../../src/lib/brokers/kafka/client/errors.js'
import {parseKafkaUrl} from '../../../src/lib/brokers/kafka/url.js'
import {AuthError, ConnectionError, ExitCode} from '../../../src/lib/errors.js'

/** kafkajs's error classes as they are at run time (its type declarations leave out constructor arguments and some classes). */
const kafkaErrors = kafkajs as unknown as Record<'KafkaJSSASLAuthenticationError' | 'KafkaJSConnectionClosedError', new (message: string, details?: object) => Error>
const {createErrorFromCode} = createRequire(import.meta.url)('kafkajs/src/protocol/error.js') as {createErrorFromCode: (code: number) => Error}
const url = 'kafka://ops:***@k:9093?sasl=scram-sha-512&ssl=true'
const target = parseKafkaUrl('kafka://ops:hunter2-pw@k:9093?sasl=scram-sha-512&ssl=true', url)

describe('kafka failure classification', () => {
  test('each ACL refusal is exit 6 (permission) naming the resource and the operation bq needed', () => {
    const cases: Array<[string, number, RegExp]> = [
      ['publish to topic orders', 29, /not authorized \(TOPIC_AUTHORIZATION_FAILED\): the user needs the ACL Write on topic orders$/],
      ['create topic orders', 29, /Create on topic orders$/],
      ['read topic orders', 29, /Read on topic orders$/],
      ['read the metadata of topic orders', 29, /Describe on topic orders$/],
      ['commit the offsets of consumer group bq-redrive.orders', 30, /GROUP_AUTHORIZATION_FAILED\): the user needs the ACL Read on group bq-redrive\.orders$/],
      ['read the offsets of consumer group bq-redrive.orders', 30, /Describe on group bq-redrive\.orders$/],
      ['list topics', 31, /CLUSTER_AUTHORIZATION_FAILED\): the user needs an ACL on the cluster$/],
      ['publish to topic orders', 53, /TRANSACTIONAL_ID_AUTHORIZATION_FAILED\): the user needs an ACL on the transactional id$/],
    ]
    for (const [what, code, expected] of cases) {
      const error = kafkaFailure(what, createErrorFromCode(code), url, target.secrets)
      assert.ok(error instanceof AuthError, what)
      assert.equal(error.code, 'permission')
      assert.equal(error.exitCode, ExitCode.auth)
      assert.match(error.message, new RegExp(`^cannot ${what.replaceAll('.', '\\.')} on kafka://ops:\\*\\*\\*@k:9093`))
      assert.match(error.message, expected)
    }
  })

  test('a SASL failure is exit 6 (auth), at connect naming the user and the mechanism, never the password', () => {
    const refused = new kafkaErrors.KafkaJSSASLAuthenticationError('SASL SCRAM SHA512 authentication failed: invalid credentials for hunter2-pw')
    const atConnect = connectFailure(refused, url, target)
    assert.ok(atConnect instanceof AuthError)
    assert.equal(atConnect.code, 'auth')
    assert.match(atConnect.message, /refused the credentials of user ops \(SCRAM-SHA-512\)/)
    const later = kafkaFailure('read topic orders', refused, url, target.secrets)
    assert.ok(later instanceof AuthError)
    assert.equal(later.code, 'auth')
    for (const message of [atConnect.message, later.message]) assert.ok(!message.includes('hunter2-pw'), message)
  })

  test('a connection closed at connect names what the URL lacks; mid-run it stays a plain exit 4', () => {
    const closed = new kafkaErrors.KafkaJSConnectionClosedError('Closed connection', {host: 'k', port: 9093})
    const plain = parseKafkaUrl('kafka://k:9093', 'kafka://k:9093')
    const noSasl = parseKafkaUrl('kafka://k:9093?ssl=true', 'kafka://k:9093?ssl=true')
    const noTls = parseKafkaUrl('kafka://u:p@k:9093?sasl=plain', 'kafka://u:***@k:9093?sasl=plain')
    assert.match(connectFailure(closed, 'u', plain).message, /it may want TLS \(add ssl=true.*\) or SASL \(add sasl=scram-sha-512/)
    assert.match(connectFailure(closed, 'u', noSasl).message, /it likely wants SASL authentication: add sasl=scram-sha-512/)
    assert.match(connectFailure(closed, 'u', noTls).message, /it likely wants TLS: add ssl=true/)
    assert.match(connectFailure(closed, 'u', target).message, /the connection was closed/)
    for (const t of [plain, noSasl, noTls, target]) assert.ok(connectFailure(closed, 'u', t) instanceof ConnectionError)
    const midRun = kafkaFailure('read topic orders', closed, 'kafka://k:9093', [])
    assert.ok(midRun instanceof ConnectionError)
    assert.doesNotMatch(midRun.message, /sasl=|ssl=true/)
  })
})
