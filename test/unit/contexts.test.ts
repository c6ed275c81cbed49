/**
 * Contexts without a process: the file (path, mode, strict reading), secrets (never stored, filled
 * in at use time), the precedence of --broker, --context, $BQ_BROKER, $BQ_CONTEXT and the current
 * context, and the guardrails of a protected one.
 */
import {after, before, describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync} from 'node:fs'
import {homedir, tmpdir} from 'node:os'
import path from 'node:path'

import {confirmChange} from '../../src/lib/cli/guardrails.js'
import {chooseBroker, contextLine} from '../../src/lib/contexts/resolve.js'
import {holdsSecret, readPassword, takesPassword, withPassword} from '../../src/lib/contexts/secret.js'
import {configDir, contextsPath, readContexts, writeContexts} from '../../src/lib/contexts/store.js'
import type {ContextStore} from '../../src/lib/contexts/store.js'
import {UsageError} from '../../src/lib/errors.js'

let dir: string
before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-contexts-'))
})
after(() => rmSync(dir, {recursive: true, force: true}))

describe('the contexts file', () => {
  test('lives in $XDG_CONFIG_HOME/bq (absolute only), else ~/.config/bq', () => {
    assert.equal(contextsPath({XDG_CONFIG_HOME: '/etc/xdg-test'}), '/etc/xdg-test/bq/contexts.json')
    assert.equal(configDir({XDG_CONFIG_HOME: 'relative'}), path.join(homedir(), '.config'))
    assert.equal(configDir({}), path.join(homedir(), '.config'))
  })

  test('is written 0600 (whatever the umask) and read back; an absent file is an empty store', () => {
    const env = {XDG_CONFIG_HOME: path.join(dir, 'write')}
    assert.deepEqual(readContexts(env), {contexts: {}})
    const previous = process.umask(0o000)
    try {
      writeContexts({current: 'a', contexts: {a: {broker: 'redis://h:6379', protected: true, password: {env: 'PW'}}}}, env)
    } finally {
      process.umask(previous)
    }
    assert.equal(statSync(contextsPath(env)).mode & 0o777, 0o600)
    assert.deepEqual(readContexts(env), {current: 'a', contexts: {a: {broker: 'redis://h:6379', protected: true, password: {env: 'PW'}}}})
  })

  test('a damaged or mistyped file is a one-line usage error, never silently replaced', () => {
    const env = {XDG_CONFIG_HOME: path.join(dir, 'damaged')}
    mkdirSync(path.dirname(contextsPath(env)), {recursive: true})
    for (const text of ['{not json', '[]', '{"contexts": {"a": {}}}', '{"contexts": {"a": {"broker": "redis://h", "password": "hunter2"}}}']) {
      writeFileSync(contextsPath(env), text)
      assert.throws(() => readContexts(env), (error: Error) => error instanceof UsageError && !error.message.includes('\n') && error.message.includes(contextsPath(env)))
    }
  })
})

describe('secrets', () => {
  test('a password, token or key in a URL is a secret; a user name is not', () => {
    assert.equal(holdsSecret('amqp://guest:guest@localhost'), true)
    assert.equal(holdsSecret('redis://:pw@localhost:6379'), true)
    assert.equal(holdsSecret('kafka://h:9092?sasl=plain&password=x'), true)
    assert.equal(holdsSecret('Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=abc'), true)
    assert.equal(holdsSecret('amqp://guest@localhost/vhost'), false)
    assert.equal(holdsSecret('redis://127.0.0.1:6379/0'), false)
  })

  test('the password goes into the userinfo, percent-encoded', () => {
    assert.equal(withPassword('amqp://ops@rabbit:5672/orders', 'p@ss/w:rd'), 'amqp://ops:p%40ss%2Fw%3Ard@rabbit:5672/orders')
    assert.equal(withPassword('redis://127.0.0.1:6379/0', 'pw'), 'redis://:pw@127.0.0.1:6379/0')
    assert.equal(takesPassword('Endpoint=sb://ns/;SharedAccessKeyName=k'), false)
  })

  test('read from a variable or a file (its final newline dropped); missing ones are one-line usage errors', () => {
    assert.equal(readPassword('p', {env: 'PW'}, {PW: 'secret'}), 'secret')
    const file = path.join(dir, 'pw')
    writeFileSync(file, 'from-file\n')
    assert.equal(readPassword('p', {file}), 'from-file')
    assert.throws(() => readPassword('p', {env: 'PW'}, {}), /^UsageError: context p: its password variable \$PW is not set/)
    assert.throws(() => readPassword('p', {file: path.join(dir, 'absent')}), /context p: cannot read its password file .*absent: no such file/)
  })
})

describe('which broker: --broker > --context > $BQ_BROKER > $BQ_CONTEXT > current > embedded', () => {
  const store: ContextStore = {
    current: 'cur',
    contexts: {
      cur: {broker: 'redis://current:6379', protected: false},
      named: {broker: 'amqp://ops@named/vhost', protected: true, password: {env: 'NAMED_PW'}},
      envctx: {broker: 'redis://envctx:6379', protected: false},
    },
  }
  const load = () => store
  const choose = (flags: {broker?: string; context?: string}, env: NodeJS.ProcessEnv = {}) => chooseBroker(flags, env, load)

  test('each level, first match wins', () => {
    assert.deepEqual(choose({broker: 'redis://flag'}, {BQ_BROKER: 'redis://env', BQ_CONTEXT: 'envctx'}), {})
    assert.deepEqual(choose({context: 'named'}, {BQ_BROKER: 'redis://env', NAMED_PW: 's3'}), {
      url: 'amqp://ops:s3@named/vhost',
      context: {name: 'named', broker: 'amqp://ops@named/vhost', protected: true, from: 'flag'},
    })
    assert.deepEqual(choose({}, {BQ_BROKER: 'redis://env', BQ_CONTEXT: 'envctx'}), {})
    assert.equal(choose({}, {BQ_CONTEXT: 'envctx'}).context?.from, 'env')
    assert.equal(choose({}, {BQ_CONTEXT: ' '}).context?.name, 'cur')
    assert.deepEqual(choose({}).context, {name: 'cur', broker: 'redis://current:6379', protected: false, from: 'current'})
    assert.deepEqual(chooseBroker({}, {}, () => ({contexts: {}})), {})
  })

  test('--broker with --context is a usage error; an unknown name says where it came from', () => {
    assert.throws(() => choose({broker: 'redis://x', context: 'named'}), /--broker and --context both name a broker/)
    assert.throws(() => choose({context: 'nope'}), /no context named "nope" \(from --context\)/)
    assert.throws(() => choose({}, {BQ_CONTEXT: 'nope'}), /\(from \$BQ_CONTEXT\)/)
  })

  test('--broker or $BQ_BROKER decide without reading the contexts file', () => {
    const unreadable = () => {
      throw new Error('read')
    }
    assert.deepEqual(chooseBroker({broker: 'redis://x'}, {}, unreadable), {})
    assert.deepEqual(chooseBroker({}, {BQ_BROKER: 'redis://x', BQ_CONTEXT: 'named'}, unreadable), {})
  })

  test('the stderr line names the context and its broker, no password', () => {
    assert.equal(contextLine({name: 'prod', broker: 'amqp://ops@h/v', protected: true, from: 'flag'}), 'bq: context prod (protected) → amqp://ops@h/v')
  })
})

describe('guardrails of a protected context', () => {
  const prod = {name: 'prod', broker: 'amqp://ops@h/v', protected: true, from: 'flag' as const}

  test('--yes needs --max N; without a --max flag --yes is refused outright', async () => {
    await assert.rejects(confirmChange('Redrive?', {yes: true, max: 0, typed: 'orders.dlq', context: prod}), /context prod is protected: --yes needs --max N/)
    await assert.rejects(confirmChange('Redrive?', {yes: true, typed: 'orders.dlq', context: prod}), /this command has no --max to bound an unattended run, so --yes is refused/)
    await confirmChange('Redrive?', {yes: true, max: 5, typed: 'orders.dlq', context: prod})
  })

  test('an unprotected context (or none) keeps the plain --yes', async () => {
    await confirmChange('Redrive?', {yes: true, typed: 'q', context: {...prod, protected: false}})
    await confirmChange('Redrive?', {yes: true, typed: 'q'})
  })
})
