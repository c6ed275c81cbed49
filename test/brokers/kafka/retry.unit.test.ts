/** Which Kafka failures bq retries through a leader election, and how long (kafka/client/retry.ts): pure, no broker. */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {protocolError} from '../../../src/lib/brokers/kafka/client/produce-request.js'
import {isElectionAnswer, isLostBroker, isRetriableFailure, retryFailure, retrying} from '../../../src/lib/brokers/kafka/client/retry.js'
import {ConnectionError, ExitCode} from '../../../src/lib/errors.js'

/** kafkajs's error for a refused connection, as its connection module builds it. */
const refused = () => Object.assign(new Error('Connection error: connect ECONNREFUSED 127.0.0.1:19291'), {name: 'KafkaJSConnectionError', code: 'ECONNREFUSED'})

describe('kafka retriable failures', () => {
  it('retries the answers a leader election or a moved coordinator explains', () => {
    // 6 NOT_LEADER_OR_FOLLOWER, 5 LEADER_NOT_AVAILABLE, 14 COORDINATOR_LOAD_IN_PROGRESS, 15 COORDINATOR_NOT_AVAILABLE,
    // 16 NOT_COORDINATOR, 19 NOT_ENOUGH_REPLICAS, 20 NOT_ENOUGH_REPLICAS_AFTER_APPEND, 7 REQUEST_TIMED_OUT
    for (const code of [6, 5, 14, 15, 16, 19, 20, 7]) assert.ok(isElectionAnswer(protocolError(code)), `error code ${code}`)
    // 3 UNKNOWN_TOPIC_OR_PARTITION means "no such topic" to bq's reads; 29 TOPIC_AUTHORIZATION_FAILED, 58 SASL_AUTHENTICATION_FAILED never change on a retry.
    for (const code of [3, 29, 58]) assert.ok(!isRetriableFailure(protocolError(code)), `error code ${code}`)
  })

  it('counts a refused or dropped connection as a lost broker, refused credentials and TLS failures not', () => {
    assert.ok(isLostBroker(refused()))
    assert.ok(isLostBroker(Object.assign(new Error('Closed connection'), {name: 'KafkaJSConnectionClosedError'})))
    assert.ok(!isLostBroker(Object.assign(new Error('SASL PLAIN authentication failed'), {name: 'KafkaJSSASLAuthenticationError'})))
    assert.ok(!isLostBroker(Object.assign(new Error('self-signed certificate in certificate chain'), {name: 'KafkaJSConnectionError', code: 'SELF_SIGNED_CERT_IN_CHAIN'})))
  })
})

describe('kafka retry window', () => {
  it('retries until the attempt succeeds, refreshing before each retry', async () => {
    let attempts = 0
    let refreshes = 0
    const value = await retrying(async () => {
      if (++attempts < 3) throw protocolError(6)
      return 'written'
    }, {windowMs: 10_000, refresh: async () => void refreshes++})
    assert.equal(value, 'written')
    assert.equal(attempts, 3)
    assert.equal(refreshes, 2)
  })

  it('fails at once on what a retry cannot cure', async () => {
    let attempts = 0
    await assert.rejects(retrying(async () => {
      attempts++
      throw protocolError(29)
    }, {windowMs: 10_000}))
    assert.equal(attempts, 1)
  })

  it('gives up once the window has passed, as exit 4 naming the last answer', async () => {
    let attempts = 0
    const failure = await retrying(async () => {
      attempts++
      throw protocolError(19)
    }, {windowMs: 500}).then(() => undefined, (error: unknown) => retryFailure('publish to topic t', error, 'kafka://k1:9092', []))
    assert.ok(attempts >= 2 && attempts <= 5, `${attempts} attempts in a 500 ms window`)
    assert.ok(failure instanceof ConnectionError)
    assert.equal(failure.exitCode, ExitCode.connection)
    assert.match(failure.message, /^cannot publish to topic t: the Kafka cluster at kafka:\/\/k1:9092 stayed unavailable for [\d.]+ s \(NOT_ENOUGH_REPLICAS: /)
  })

  it('a refused connection at the end of the window is a lost broker (exit 4)', async () => {
    const failure = await retrying(async () => Promise.reject(refused()), {windowMs: 200}).then(() => undefined, (error: unknown) => retryFailure('read topic t', error, 'kafka://k1:9092', []))
    assert.ok(failure instanceof ConnectionError)
    assert.match(failure.message, /^cannot read topic t: lost or could not reach kafka:\/\/k1:9092: connection refused$/)
  })
})
