import assert from 'node:assert/strict'
import {describe, test} from 'node:test'

import {clientOptions, nodeOptions} from '../../../src/lib/brokers/redis/connection.js'
import {parseRedisUrl} from '../../../src/lib/brokers/redis/url.js'
import {redactUrl} from '../../../src/lib/brokers/shared/redact.js'
import {UsageError} from '../../../src/lib/errors.js'
import {testCerts} from '../../support/certs.js'

const limits = {connectTimeoutMs: 1000, commandTimeoutMs: 2000, connectionName: 'bq'}
const usage = (pattern: RegExp) => (error: unknown) => error instanceof UsageError && pattern.test(error.message)

describe('Redis URLs', () => {
  test('redis+sentinel:// lists sentinels (default port 26379, IPv6 in brackets), names the master and takes ?db=', () => {
    const raw = 'redis+sentinel://app:s3cr3t-pw@10.0.0.1,[::1]:26380,sentinel-c:26381/mymaster?db=2&sentinelPassword=sent-pw&prefix=queues:'
    const target = parseRedisUrl(raw, redactUrl(raw))
    assert.deepEqual(target.sentinel, {
      sentinels: [
        {host: '10.0.0.1', port: 26379},
        {host: '::1', port: 26380},
        {host: 'sentinel-c', port: 26381},
      ],
      masterName: 'mymaster',
      password: 'sent-pw',
    })
    assert.deepEqual({db: target.connection.db, username: target.connection.username, password: target.connection.password}, {db: 2, username: 'app', password: 's3cr3t-pw'})
    assert.ok(target.secrets.includes('s3cr3t-pw') && target.secrets.includes('sent-pw'))
    assert.equal(redactUrl(raw), 'redis+sentinel://app:***@10.0.0.1,[::1]:26380,sentinel-c:26381/mymaster?db=2&sentinelPassword=***&prefix=queues:')
    const options = clientOptions(target, limits)
    assert.equal(options.name, 'mymaster')
    assert.equal(options.role, 'master')
    assert.equal(options.sentinelPassword, 'sent-pw')
    assert.equal(options.db, 0)
    assert.equal(options.tls, undefined)
  })

  test('rediss+sentinel:// uses TLS to the sentinels and the master, each checked against its own host unless servername= says otherwise', () => {
    const {ca} = testCerts()
    const target = parseRedisUrl(`rediss+sentinel://s1:26379,s2/m?ca=${ca}`, 'u')
    const options = clientOptions(target, limits)
    assert.equal(options.enableTLSForSentinelMode, true)
    assert.equal(options.tls?.servername, undefined)
    assert.equal(options.sentinelTLS?.servername, undefined)
    assert.equal(options.tls?.rejectUnauthorized, true)
    assert.equal(options.tls?.ca?.length, 1)
    const named = clientOptions(parseRedisUrl(`rediss+sentinel://s1/m?ca=${ca}&servername=redis.internal`, 'u'), limits)
    assert.equal(named.tls?.servername, 'redis.internal')
  })

  test('rediss:// takes the shared TLS parameters; a host name is the default servername; nodeOptions carry credentials and TLS', () => {
    const {ca, clientCert, clientKey} = testCerts()
    const target = parseRedisUrl(new URL(`rediss://bq:pw@redis.example:6380/3?ca=${ca}&cert=${clientCert}&key=${clientKey}`), 'u')
    const node = nodeOptions(target, limits)
    assert.equal(node.username, 'bq')
    assert.equal(node.password, 'pw')
    assert.equal(node.tls?.servername, 'redis.example')
    assert.ok(typeof node.tls?.cert === 'string' && typeof node.tls.key === 'string')
    assert.equal(node.retryStrategy?.(1), null)
    assert.equal(node.enableOfflineQueue, false)
    const client = clientOptions(target, limits)
    assert.deepEqual([client.host, client.port, client.db, target.connection.db], ['redis.example', 6380, 0, 3])
  })

  test('refusals: TLS options without TLS, sentinel options on a plain URL, a sentinel URL without a master name, bad ports', () => {
    assert.throws(() => parseRedisUrl('redis://h?ca=/x.pem', 'u'), usage(/ca= needs TLS: use rediss:\/\//))
    assert.throws(() => parseRedisUrl('redis+sentinel://h/m?insecure=true', 'u'), usage(/insecure= needs TLS: use rediss\+sentinel:\/\//))
    assert.throws(() => parseRedisUrl('redis://h?db=1', 'u'), usage(/unknown parameter "db" .*known: prefix, notify, timeout, ca/))
    assert.throws(() => parseRedisUrl('redis://h?sentinelPassword=x', 'u'), usage(/unknown parameter "sentinelPassword"/))
    assert.throws(() => parseRedisUrl('redis+sentinel://h1,h2', 'u'), usage(/must be the master's name/))
    assert.throws(() => parseRedisUrl('redis+sentinel://h1,h2:notaport/m', 'u'), usage(/"notaport" is not a port number/))
    assert.throws(() => parseRedisUrl('redis+sentinel://h1/m?db=x', 'u'), usage(/db in u must be a database number/))
  })
})
