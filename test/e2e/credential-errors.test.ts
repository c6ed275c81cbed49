// @test-uses sqs redis rabbitmq
/**
 * Credential errors through bin/run.js: no credentials at all is a refusal (exit 6, retrying the
 * same command cannot help), not a connection failure (exit 4); and a refused password is masked
 * where it is echoed, never inside the server's own words (a password `user` must not turn
 * "username" into "***name").
 */
import {after, before, describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {amqpUrl, redisUrl} from '../suites/command-suite.js'
import {requireBroker} from '../support/brokers.js'
import {hasStackTrace, jsonOutput, runBq} from '../support/cli.js'

const sqsUrl = process.env.BQ_TEST_SQS_URL ?? 'sqs://us-east-1?endpoint=http://127.0.0.1:9324'
let dir: string
let env: NodeJS.ProcessEnv
before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-credentials-'))
  env = {XDG_DATA_HOME: dir, BQ_BROKER: '', BQ_LEDGER: path.join(dir, 'ledger.db')}
})
after(() => rmSync(dir, {recursive: true, force: true}))

describe('no credentials is exit 6', () => {
  test('SQS with no AWS credentials anywhere', async (t) => {
    const endpoint = new URL(new URL(sqsUrl).searchParams.get('endpoint') ?? 'http://127.0.0.1:9324')
    if (!(await requireBroker(t, 'SQS', endpoint.hostname, Number(endpoint.port)))) return
    const bare: NodeJS.ProcessEnv = {
      ...env, HOME: dir, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', AWS_SESSION_TOKEN: '', AWS_PROFILE: '',
      AWS_CONFIG_FILE: path.join(dir, 'none'), AWS_SHARED_CREDENTIALS_FILE: path.join(dir, 'none'), AWS_EC2_METADATA_DISABLED: 'true',
    }
    const result = await runBq(['dlq', 'ls', '-b', sqsUrl], {env: bare})
    assert.equal(result.code, 6, result.stderr)
    assert.ok(!hasStackTrace(result.stderr), result.stderr)
    assert.match(result.stderr, /^Error: no AWS credentials for /m)
    const json = jsonOutput((await runBq(['dlq', 'ls', '-b', sqsUrl, '--json'], {env: bare})).stdout)
    assert.ok(!json.ok && json.error.code === 'auth' && json.error.exit_code === 6, JSON.stringify(json))
  })
})

describe('a refused password is masked only where it is echoed', () => {
  test('Redis: a password that is a word of the server message leaves that message whole', async (t) => {
    const url = new URL(redisUrl)
    if (!(await requireBroker(t, 'Redis', url.hostname, Number(url.port || 6379)))) return
    for (const password of ['user', 'disabled']) {
      const result = await runBq(['peek', 'q', '-b', `redis://nobody-${process.pid}:${password}@${url.host}`], {env})
      assert.equal(result.code, 6, result.stderr)
      assert.match(result.stderr, /WRONGPASS invalid username-password pair or user is disabled/)
      assert.match(result.stderr, /redis:\/\/nobody-\d+:\*\*\*@/)
      assert.doesNotMatch(result.stderr, /\*\*\*name|or \*\*\* is|is \*\*\*/)
    }
  })

  test('RabbitMQ: the refusal names the user, and the URL shows no password', async (t) => {
    const url = new URL(amqpUrl)
    if (!(await requireBroker(t, 'RabbitMQ', url.hostname, Number(url.port || 5672)))) return
    const result = await runBq(['peek', 'q', '-b', `amqp://guest:refused@${url.host}`], {env})
    assert.equal(result.code, 6, result.stderr)
    assert.match(result.stderr, /amqp:\/\/guest:\*\*\*@.* refused the login of user "guest"/)
  })
})
