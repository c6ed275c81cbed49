/**
 * scrubSecrets (src/lib/brokers/shared/redact.ts): what a client echoes of the credentials is
 * hidden (URL password fields, secret key=value pairs, the secret as a whole token), and nothing
 * else: a password never turns a longer word, or the server's own prose, into `***`.
 */
import {describe, test} from 'node:test'
import assert from 'node:assert/strict'

import {scrubSecrets} from '../../src/lib/brokers/shared/redact.js'

describe('scrubSecrets', () => {
  test('a password that is a common word leaves the server message as it was', () => {
    const text = 'WRONGPASS invalid username-password pair or user is disabled.'
    assert.equal(scrubSecrets(text, ['user']), text)
    assert.equal(scrubSecrets(text, ['disabled']), text)
    assert.equal(scrubSecrets(text, ['pass']), text)
  })

  test('an echoed secret is masked as a whole token, never inside a longer one', () => {
    assert.equal(scrubSecrets('auth failed for token s3cr3t-T0ken (expired)', ['s3cr3t-T0ken']), 'auth failed for token *** (expired)')
    assert.equal(scrubSecrets('bad value xs3cr3t-T0ken', ['s3cr3t-T0ken']), 'bad value xs3cr3t-T0ken')
    assert.equal(scrubSecrets('password="hunter" rejected', ['hunter']), 'password="***" rejected')
    assert.equal(scrubSecrets('login hunter:hunter@db', ['hunter']), 'login hunter:***@db')
  })

  test("a URL's password field and secret pairs are masked whatever the secret list holds", () => {
    assert.equal(scrubSecrets('cannot reach amqp://bob:pa55@host:5672/vh (refused)', []), 'cannot reach amqp://bob:***@host:5672/vh (refused)')
    assert.equal(scrubSecrets('bad Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=abc123 given', []), 'bad Endpoint=sb://ns.servicebus.windows.net/;SharedAccessKeyName=k;SharedAccessKey=*** given')
  })
})
