import assert from 'node:assert/strict'
import {execFile} from 'node:child_process'
import {mkdtempSync, rmSync} from 'node:fs'
import {createServer} from 'node:net'
import {homedir, tmpdir} from 'node:os'
import {dirname, join} from 'node:path'
import {describe, it} from 'node:test'
import {fileURLToPath} from 'node:url'
import {promisify} from 'node:util'

import {defaultBrokerUrl} from '../../src/lib/brokers/default-url.js'
import {brokerScheme, importAdapter, openBroker, redactUrl, resolveBrokerUrl} from '../../src/lib/brokers/registry.js'
import {sqlitePath} from '../../src/lib/brokers/sqlite/url.js'
import {BqError, ConnectionError, ExitCode, UsageError} from '../../src/lib/errors.js'

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const registryModule = join(repoRoot, 'src', 'lib', 'brokers', 'registry.ts')

/** A localhost port nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as {port: number}
  await new Promise((resolve) => server.close(resolve))
  return port
}

function isUsage(pattern: RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof UsageError, `expected a UsageError, got ${String(error)}`)
    assert.equal(error.exitCode, ExitCode.usage)
    assert.match(error.message, pattern)
    assert.ok(!error.message.includes('\n'), 'one line')
    return true
  }
}

describe('resolveBrokerUrl', () => {
  it('prefers the flag, then BQ_BROKER, then the embedded default', () => {
    const env = {BQ_BROKER: 'redis://env:6379/0', XDG_DATA_HOME: '/data'}
    assert.equal(resolveBrokerUrl('amqp://flag', env), 'amqp://flag')
    assert.equal(resolveBrokerUrl(undefined, env), 'redis://env:6379/0')
    assert.equal(resolveBrokerUrl(undefined, {XDG_DATA_HOME: '/data'}), 'sqlite:///data/bq/queues.db')
  })

  it('treats empty values as unset', () => {
    assert.equal(resolveBrokerUrl('', {BQ_BROKER: ' ', XDG_DATA_HOME: '/d'}), 'sqlite:///d/bq/queues.db')
  })

  it('puts the default store under XDG_DATA_HOME, else ~/.local/share (relative XDG paths ignored)', () => {
    assert.equal(defaultBrokerUrl({XDG_DATA_HOME: '/srv/xdg'}), 'sqlite:///srv/xdg/bq/queues.db')
    const fallback = `sqlite://${join(homedir(), '.local', 'share', 'bq', 'queues.db')}`
    assert.equal(defaultBrokerUrl({}), fallback)
    assert.equal(defaultBrokerUrl({XDG_DATA_HOME: ''}), fallback)
    assert.equal(defaultBrokerUrl({XDG_DATA_HOME: 'relative/dir'}), fallback)
  })
})

describe('broker schemes', () => {
  it('reads the scheme case-insensitively and recognises Azure connection strings', () => {
    assert.equal(brokerScheme('REDIS://h'), 'redis')
    assert.equal(brokerScheme('pulsar+ssl://h:6651'), 'pulsar+ssl')
    assert.equal(brokerScheme('Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=s'), 'sb')
    assert.equal(brokerScheme('localhost:6379'), undefined)
  })

  it('takes everything after sqlite:// as the path', () => {
    assert.equal(sqlitePath('sqlite:///abs/x.db'), '/abs/x.db')
    assert.equal(sqlitePath('sqlite://rel/x.db'), 'rel/x.db')
    assert.equal(sqlitePath('SQLITE:///a b/x.db?mode=ro'), '/a b/x.db?mode=ro')
    assert.throws(() => sqlitePath('sqlite://'), isUsage(/names no database file/))
  })

  it('refuses an unknown scheme with a one-line usage error listing the known ones', async () => {
    await assert.rejects(openBroker('mqtt://user:pw@h:1883'), isUsage(/^unknown broker URL scheme "mqtt" in mqtt:\/\/user:\*\*\*@h:1883; known: sqlite, redis, .*kafka/))
  })

  it('refuses a value without a scheme', async () => {
    await assert.rejects(openBroker('localhost:6379'), isUsage(/is not a broker URL/))
  })

  it('opens pulsar:// and pulsar+ssl:// without connecting, refusing unknown parameters and non-persistent topics', async () => {
    for (const url of ['pulsar://127.0.0.1:6650?admin=http://127.0.0.1:8080', 'pulsar+ssl://h:6651?token=s3cr3t-token']) {
      const adapter = await openBroker(url)
      assert.equal(adapter.kind, 'pulsar')
      assert.ok(!adapter.displayUrl.includes('s3cr3t-token'), adapter.displayUrl)
      assert.deepEqual({...adapter.capabilities}, {queuesExist: true, truePeek: true, headers: true, delay: true, nativeDlq: true, atomicMove: false, afterCrash: 'broker-returns'})
      await assert.rejects(adapter.count('non-persistent://public/default/x'), isUsage(/persistent topics only/))
      await assert.rejects(adapter.count('a/b'), isUsage(/neither a topic name nor/))
      await adapter.close()
    }
    await assert.rejects(openBroker('pulsar://h:6650?subscripton=x'), isUsage(/unknown parameter "subscripton"/))
    await assert.rejects(openBroker('pulsar://h:6650?subscription_type=Failover'), isUsage(/Exclusive or Shared/))
    await assert.rejects(openBroker('pulsar://u:pw@h:6650'), isUsage(/not user:password/))
  })

  it('opens sb:// from a connection string without connecting, redacting its key; sb:// alone needs @azure/identity or the environment', async () => {
    const conn = 'Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=c2VjcmV0+/=='
    const adapter = await openBroker(conn)
    assert.equal(adapter.kind, 'service-bus')
    assert.ok(!adapter.displayUrl.includes('c2VjcmV0'), adapter.displayUrl)
    assert.deepEqual({...adapter.capabilities}, {queuesExist: true, truePeek: true, headers: true, delay: true, nativeDlq: true, atomicMove: false, ordered: true, receiveSideEffects: false, afterCrash: 'timeout-returns'})
    await assert.rejects(adapter.publish('orders/$DeadLetterQueue', []), isUsage(/dead-letter sub-queue/))
    await assert.rejects(adapter.publish('events/Subscriptions/audit', []), isUsage(/publish to the topic events/))
    await adapter.close()
    const saved = process.env.BQ_SERVICEBUS_CONNECTION_STRING
    delete process.env.BQ_SERVICEBUS_CONNECTION_STRING
    try {
      await assert.rejects(openBroker('sb://ns.servicebus.windows.net'), isUsage(/needs the npm package @azure\/identity: run npm install @azure\/identity, or pass a connection string/))
      process.env.BQ_SERVICEBUS_CONNECTION_STRING = conn.replace('ns.', 'other.')
      await assert.rejects(openBroker('sb://ns.servicebus.windows.net'), isUsage(/is for other\.servicebus\.windows\.net, not ns\.servicebus\.windows\.net/))
      process.env.BQ_SERVICEBUS_CONNECTION_STRING = conn
      const fromEnv = await openBroker('sb://ns.servicebus.windows.net')
      assert.equal(fromEnv.displayUrl, 'sb://ns.servicebus.windows.net')
      await fromEnv.close()
    } finally {
      if (saved === undefined) delete process.env.BQ_SERVICEBUS_CONNECTION_STRING
      else process.env.BQ_SERVICEBUS_CONNECTION_STRING = saved
    }
  })

  it('never echoes a connection string secret in a refusal', async () => {
    const conn = 'Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=Root;SharedAccessKey=c2VjcmV0+/==;EntityPath=orders'
    await assert.rejects(openBroker(conn), (error: unknown) => {
      assert.ok(error instanceof UsageError)
      assert.match(error.message, /EntityPath/)
      assert.ok(!error.message.includes('c2VjcmV0'), error.message)
      return true
    })
  })

  it('turns a refused connection into a one-line, redacted ConnectionError (exit 4)', async () => {
    const port = await closedPort()
    await assert.rejects(openBroker(`redis://:pa55word@127.0.0.1:${port}/0`), (error: unknown) => {
      assert.ok(error instanceof ConnectionError)
      assert.equal(error.exitCode, ExitCode.connection)
      assert.equal(error.message, `cannot connect to redis://:***@127.0.0.1:${port}/0: connection refused`)
      return true
    })
  })

  it('opens the embedded store for sqlite:// URLs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bq-registry-'))
    try {
      const adapter = await openBroker(`sqlite://${join(dir, 'q.db')}`)
      assert.equal(adapter.kind, 'sqlite')
      assert.equal(adapter.displayUrl, `sqlite://${join(dir, 'q.db')}`)
      await adapter.close()
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})

describe('lazy adapter loading', () => {
  /** Opens a URL in a fresh process and lists the npm packages that ended up loaded. */
  async function packagesLoadedBy(url: string): Promise<string[]> {
    const script = `
      import {createRequire} from 'node:module'
      const {openBroker} = await import(${JSON.stringify(registryModule)})
      try { const adapter = await openBroker(${JSON.stringify(url)}); await adapter.close() } catch {}
      const require = createRequire(import.meta.url)
      const names = Object.keys(require.cache).filter((k) => k.includes('node_modules')).map((k) => k.split('node_modules/').pop().split('/')[0])
      process.stdout.write(JSON.stringify([...new Set(names)]))
    `
    const {stdout} = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {cwd: repoRoot})
    return JSON.parse(stdout) as string[]
  }

  it('loads ioredis for redis:// and neither amqplib nor better-sqlite3', async () => {
    const loaded = await packagesLoadedBy(`redis://127.0.0.1:${await closedPort()}/0`)
    assert.ok(loaded.includes('ioredis'), `loaded: ${loaded.join(', ')}`)
    assert.ok(!loaded.includes('amqplib'))
    assert.ok(!loaded.includes('better-sqlite3'))
  })

  it('loads better-sqlite3 for sqlite:// and no network SDK', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bq-registry-'))
    try {
      const loaded = await packagesLoadedBy(`sqlite://${join(dir, 'q.db')}`)
      assert.ok(loaded.includes('better-sqlite3'), `loaded: ${loaded.join(', ')}`)
      assert.ok(!loaded.includes('ioredis'))
      assert.ok(!loaded.includes('amqplib'))
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })

  it('loads only ws for pulsar:// (no native Pulsar client)', async () => {
    const loaded = await packagesLoadedBy(`pulsar://127.0.0.1:${await closedPort()}`)
    assert.ok(loaded.includes('ws'), `loaded: ${loaded.join(', ')}`)
    for (const sdk of ['pulsar-client', 'ioredis', 'amqplib', 'better-sqlite3', 'kafkajs', 'rhea']) assert.ok(!loaded.includes(sdk), `${sdk} loaded`)
  })

  it('loads @azure/service-bus for a Service Bus connection string and no other broker SDK', async () => {
    const loaded = await packagesLoadedBy(`Endpoint=sb://127.0.0.1:${await closedPort()}/;SharedAccessKeyName=k;SharedAccessKey=s;UseDevelopmentEmulator=true`)
    assert.ok(loaded.includes('@azure'), `loaded: ${loaded.join(', ')}`)
    for (const sdk of ['ioredis', 'amqplib', 'better-sqlite3', 'kafkajs', '@aws-sdk']) assert.ok(!loaded.includes(sdk), `${sdk} loaded`)
  })

  it('loads no SDK at all for a scheme that is refused', async () => {
    const loaded = await packagesLoadedBy('kafka://127.0.0.1:9092')
    for (const sdk of ['ioredis', 'amqplib', 'better-sqlite3']) assert.ok(!loaded.includes(sdk), `${sdk} loaded`)
  })

  it('names the npm package to install when an SDK is missing', async () => {
    const missing = Object.assign(new Error("Cannot find package 'ioredis' imported from /x/redis.js"), {code: 'ERR_MODULE_NOT_FOUND'})
    await assert.rejects(
      importAdapter('redis', 'ioredis', () => Promise.reject(missing)),
      (error: unknown) => {
        assert.ok(error instanceof BqError)
        assert.equal(error.message, 'the redis:// broker needs the npm package ioredis, which is not installed: run npm install ioredis')
        return true
      },
    )
  })

  it('names the package when an SDK fails to load for another reason', async () => {
    const broken = new Error('Could not locate the bindings file.\nTried: …')
    await assert.rejects(importAdapter('sqlite', 'better-sqlite3', () => Promise.reject(broken)), (error: unknown) => {
      assert.ok(error instanceof BqError)
      assert.equal(error.message, 'the sqlite:// broker adapter could not be loaded (package better-sqlite3): Could not locate the bindings file.')
      return true
    })
  })
})

describe('redactUrl', () => {
  const cases: Array<[string, string]> = [
    ['redis://:secret@host:6379/0', 'redis://:***@host:6379/0'],
    ['redis://user:secret@host:6379/0?prefix=queues:', 'redis://user:***@host:6379/0?prefix=queues:'],
    ['amqps://guest:gu%40st@rabbit.example/vhost', 'amqps://guest:***@rabbit.example/vhost'],
    ['amqp://user:p@ss@host/vh', 'amqp://user:***@host/vh'],
    ['amqp://user:pa/ss#x?y@host:5672/vh', 'amqp://user:***@host:5672/vh'],
    ['redis://user@host:6379', 'redis://user@host:6379'],
    ['redis://host:6379/0', 'redis://host:6379/0'],
    ['redis://host:6379/0?note=a@b', 'redis://host:6379/0?note=a@b'],
    ['sqlite:///home/me/.local/share/bq/queues.db', 'sqlite:///home/me/.local/share/bq/queues.db'],
    ['sqs://eu-west-1?endpoint=http://localhost:9324&secret=abc&access_key=AKIA', 'sqs://eu-west-1?endpoint=http://localhost:9324&secret=***&access_key=***'],
    ['pulsar://h:6650?token=eyJhbGciOi&admin=http://h:8080', 'pulsar://h:6650?token=***&admin=http://h:8080'],
    ['kafka://h:9092?sasl.password=pw&sasl.username=u', 'kafka://h:9092?sasl.password=***&sasl.username=u'],
    ['artemis://h:5672?Password=pw', 'artemis://h:5672?Password=***'],
    ['kafka://h:9092?client_secret=s3', 'kafka://h:9092?client_secret=***'],
    [
      'Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=AbC+/dEf=',
      'Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=***',
    ],
    [
      'Endpoint=sb://ns.servicebus.windows.net/;SharedAccessSignature=SharedAccessSignature sr=x&sig=AbC%3D&se=1',
      'Endpoint=sb://ns.servicebus.windows.net/;SharedAccessSignature=***&sig=***&se=1',
    ],
  ]
  for (const [input, expected] of cases) {
    it(`redacts ${expected}`, () => {
      assert.equal(redactUrl(input), expected)
      // Redacting twice changes nothing.
      assert.equal(redactUrl(expected), expected)
    })
  }
})
