/**
 * Kafka with SASL_SSL (SCRAM-SHA-512), mutual TLS and ACLs, end to end through bin/run.js, on the
 * secured test Kafka of test/brokers/kafka/secure.sh (scripts/services.sh starts it): the
 * commands as a user holding only the ACLs the README lists, a client certificate, and each way
 * a connection or a permission is refused (exit 4 or 6, one line, no password).
 */
import assert from 'node:assert/strict'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, describe, test, type TestContext} from 'node:test'

import kafkajs from 'kafkajs'

import {requireBroker} from '../../support/brokers.js'
import {testCerts} from '../../support/certs.js'
import {jsonResult} from '../../support/cli.js'
import {bq, okResult, refusedInOneLine} from '../../support/refusals.js'
import {dlqExport} from '../../suites/command-suite.js'

const host = '127.0.0.1'
const saslPort = Number(process.env.BQ_KAFKA_SECURE_PORT ?? 19190)
const mtlsPort = Number(process.env.BQ_KAFKA_SECURE_MTLS_PORT ?? 19191)
// The users secure.sh creates (test-only credentials).
const ADMIN = {user: 'admin', password: 'bq-admin-pw-7c41'}
const LIMITED = {user: 'limited', password: 'bq-limited-pw-93ae'}
const WRONG_PASSWORD = 'wrong-pw-5d2e9b'

const certs = testCerts()
const ca = `ca=${encodeURIComponent(certs.ca)}`
const sasl = (who: {user: string; password: string}, extra = ca) => `kafka://${who.user}:${encodeURIComponent(who.password)}@${host}:${saslPort}?sasl=scram-sha-512${extra === '' ? '' : `&${extra}`}`
const adminUrl = sasl(ADMIN)
const limitedUrl = sasl(LIMITED)
const mtlsUrl = `kafka://${host}:${mtlsPort}?${ca}&cert=${encodeURIComponent(certs.clientCert)}&key=${encodeURIComponent(certs.clientKey)}`

const available = (t: TestContext) => requireBroker(t, 'the secured Kafka (test/brokers/kafka/secure.sh start)', host, saslPort)

/** Topic names the ACLs of secure.sh cover: bqsec-lim-* (everything bq needs), bqsec-ro-* (Read, Describe), anything else (nothing). */
const used: string[] = []
function topicName(prefix: 'bqsec-lim-' | 'bqsec-ro-' | 'bqsec-none-', label: string): string {
  const name = `${prefix}${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 7)}`
  used.push(name)
  return name
}

after(async () => {
  if (used.length === 0) return
  const admin = new kafkajs.Kafka({
    brokers: [`${host}:${saslPort}`],
    ssl: {ca: [readFileSync(certs.ca, 'utf8')]},
    sasl: {mechanism: 'scram-sha-512', username: ADMIN.user, password: ADMIN.password},
    logLevel: kafkajs.logLevel.NOTHING,
  }).admin()
  try {
    await admin.connect()
    const topics = (await admin.listTopics()).filter((name) => used.some((prefix) => name.startsWith(prefix)))
    if (topics.length > 0) await admin.deleteTopics({topics, timeout: 30_000})
    await admin.deleteGroups(topics.flatMap((name) => [`bq-redrive.${name}`, `bq-redrive-lock.${name}`])).catch(() => undefined)
  } catch {
    // The broker is not there (the tests skipped) or already gone: nothing to clean.
  } finally {
    await admin.disconnect().catch(() => undefined)
  }
})

const ok = okResult
const refused = refusedInOneLine

const ids = (result: Record<string, unknown>) => (result.messages as Array<{id: string}>).map((message) => message.id)

async function publish(queue: string, count: number, url: string): Promise<string[]> {
  const result = await bq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--count', String(count), '-b', url])
  assert.equal(result.code, 0, result.stderr)
  return result.stdout.trim().split('\n')
}

describe('kafka over SASL_SSL with SCRAM-SHA-512 and ca=', () => {
  test('publish, peek, replay, dlq inspect, dlq redrive, dlq purge and dlq ls as a user holding only the documented ACLs', async (t) => {
    if (!(await available(t))) return
    const queue = topicName('bqsec-lim-', 'cmd')
    const dlq = `${queue}.dlq`
    const published = await publish(queue, 3, limitedUrl)
    assert.deepEqual(ids(await ok(['peek', queue, '-b', limitedUrl])), published)
    const replayed = await ok(['replay', dlqExport(queue), '--as-is', '--to', dlq, '--yes', '-b', limitedUrl])
    assert.equal((replayed.counts as {examined: number; failed: number}).examined, 4)
    assert.equal((replayed.counts as {examined: number; failed: number}).failed, 0)
    const inspected = await ok(['dlq', 'inspect', queue, '-b', limitedUrl])
    assert.equal(inspected.depth, 4, JSON.stringify(inspected))
    const redriven = await ok(['dlq', 'redrive', queue, '--select', 'reason=failed', '--yes', '-b', limitedUrl])
    assert.deepEqual(redriven.counts, {examined: 4, redriven: 3, would_redrive: 0, skipped: 1, poison: 0, failed: 0})
    assert.equal((await ok(['peek', queue, '-b', limitedUrl])).depth, 6)
    const listed = await ok(['dlq', 'ls', '-b', limitedUrl])
    assert.match(JSON.stringify(listed), new RegExp(`"${dlq.replaceAll('.', '\\.')}"`))
    const dir = mkdtempSync(path.join(tmpdir(), 'bq-kafka-secure-'))
    try {
      const backup = path.join(dir, 'purged.jsonl')
      const purged = await ok(['dlq', 'purge', queue, '--backup', backup, '--yes', '-b', limitedUrl])
      assert.deepEqual(purged.counts, {examined: 1, purged: 1, would_purge: 0, skipped: 0, poison: 0, failed: 0})
      assert.equal(readFileSync(backup, 'utf8').trim().split('\n').length, 1)
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
    assert.equal((await ok(['peek', dlq, '-b', limitedUrl])).depth, 0)
  })

  test('a wrong password is exit 6 naming the user and the mechanism, the password nowhere in the output', async (t) => {
    if (!(await available(t))) return
    const line = await refused(['peek', 'bqsec-lim-any', '-b', sasl({user: LIMITED.user, password: WRONG_PASSWORD})], 6, 'auth', /refused the credentials of user limited \(SCRAM-SHA-512\)/, [WRONG_PASSWORD])
    assert.match(line, /kafka:\/\/limited:\*\*\*@/)
  })

  test('without SASL the broker hangs up on the first request: exit 4 naming sasl=scram-sha-512 and the credentials', async (t) => {
    if (!(await available(t))) return
    await refused(['peek', 'bqsec-lim-any', '-b', `kafka://${host}:${saslPort}?${ca}`], 4, 'connection', /closed the connection during the first request: it likely wants SASL authentication: add sasl=scram-sha-512 .*user:password@/)
    await refused(['peek', 'bqsec-lim-any', '-b', `kafka://${host}:${saslPort}`], 4, 'connection', /it may want TLS \(add ssl=true, and ca=PATH.*\) or SASL \(add sasl=scram-sha-512/)
    await refused(['peek', 'bqsec-lim-any', '-b', sasl(LIMITED, '')], 4, 'connection', /it likely wants TLS: add ssl=true, and ca=PATH/, [LIMITED.password])
  })

  test('a certificate from a CA bq does not trust (no ca=) is exit 4 naming ca=', async (t) => {
    if (!(await available(t))) return
    await refused(['peek', 'bqsec-lim-any', '-b', sasl(LIMITED, 'ssl=true')], 4, 'tls', /certificate is not trusted: pass ca=PATH/, [LIMITED.password])
  })

  test('insecure=true skips the certificate check and warns, on a URL listing several brokers too', async (t) => {
    if (!(await available(t))) return
    const url = `kafka://${LIMITED.user}:${LIMITED.password}@${host}:${saslPort},localhost:${saslPort}?sasl=scram-sha-512&insecure=true`
    const result = await bq(['dlq', 'ls', '-b', url])
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stderr, /Warning: TLS certificate verification is off for kafka:\/\/limited:\*\*\*@127\.0\.0\.1:\d+,localhost:\d+\?sasl=scram-sha-512&insecure=true \(insecure=true\)/)
  })

  test('a user without the ACL is exit 6 naming the topic and the operation', async (t) => {
    if (!(await available(t))) return
    const readOnly = topicName('bqsec-ro-', 'perm')
    await publish(readOnly, 1, adminUrl)
    await refused(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', readOnly, '-b', limitedUrl], 6, 'permission', new RegExp(`cannot publish to topic ${readOnly} .*TOPIC_AUTHORIZATION_FAILED.*Write on topic ${readOnly}`), [LIMITED.password])
    const hidden = topicName('bqsec-none-', 'perm')
    await publish(hidden, 1, adminUrl)
    await refused(['peek', hidden, '-b', limitedUrl], 6, 'permission', new RegExp(`TOPIC_AUTHORIZATION_FAILED.*Describe on topic ${hidden}`))
    // Describe on the topic, none on its redrive group: the group is named.
    await refused(['peek', readOnly, '-b', limitedUrl], 6, 'permission', new RegExp(`GROUP_AUTHORIZATION_FAILED.*Describe on group bq-redrive\\.${readOnly}`))
  })

  test('a redrive to a topic the user may not write moves nothing and says so; every message stays on the DLQ (census by meta.id)', async (t) => {
    if (!(await available(t))) return
    const queue = topicName('bqsec-lim-', 'census')
    const dlq = `${queue}.dlq`
    const target = topicName('bqsec-ro-', 'census')
    const seed = await publish(target, 1, adminUrl)
    const sent = await publish(dlq, 40, limitedUrl)
    const result = await bq(['dlq', 'redrive', queue, '--to', target, '--yes', '-b', limitedUrl, '--json'])
    // A refused permission is exit 6 (not a partial run, exit 3), and the JSON failure carries the report.
    assert.equal(result.code, 6, result.stdout + result.stderr)
    const report = jsonResult(result.stdout) as {counts: {redriven: number}; stop_reason: string; stop_refusal?: string}
    assert.equal(report.counts.redriven, 0)
    assert.equal(report.stop_refusal, 'permission')
    assert.match(report.stop_reason, new RegExp(`not authorized \\(TOPIC_AUTHORIZATION_FAILED\\): the user needs the ACL Write on topic ${target}`))
    const left = ids(await ok(['peek', dlq, '--all', '-b', limitedUrl]))
    const onTarget = ids(await ok(['peek', target, '--all', '-b', adminUrl]))
    const missing = sent.filter((id) => !left.includes(id))
    const duplicates = left.length - new Set(left).size
    t.diagnostic(`census: sent ${sent.length}, on the DLQ ${left.length}, missing ${missing.length}, duplicates ${duplicates}, on the target ${onTarget.length} (the seed)`)
    assert.deepEqual([...left].sort(), [...sent].sort())
    assert.deepEqual(onTarget, seed)
  })
})

describe('kafka with a client certificate (cert=, key=)', () => {
  test('a listener that requires a client certificate: the commands work with cert= and key=, and without them it is exit 4 naming them', async (t) => {
    if (!(await available(t))) return
    const queue = topicName('bqsec-none-', 'mtls')
    const published = await publish(queue, 2, mtlsUrl)
    assert.deepEqual(ids(await ok(['peek', queue, '-b', mtlsUrl])), published)
    await refused(['peek', queue, '-b', `kafka://${host}:${mtlsPort}?${ca}`], 4, 'tls', /client certificate: pass cert=PATH and key=PATH/)
  })

  test('SASL_SSL takes a client certificate too (the listener requests one)', async (t) => {
    if (!(await available(t))) return
    const queue = topicName('bqsec-lim-', 'both')
    const url = sasl(LIMITED, `${ca}&cert=${encodeURIComponent(certs.clientCert)}&key=${encodeURIComponent(certs.clientKey)}`)
    const published = await publish(queue, 1, url)
    assert.deepEqual(ids(await ok(['peek', queue, '-b', url])), published)
  })
})
