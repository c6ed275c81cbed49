/**
 * RabbitMQ's ACCESS_REFUSED texts as exit 6 permission errors. The shared node is 3.10, whose
 * texts do not name the permission kind (vhost.test.ts meets those); newer brokers name it
 * (`configure access to queue …`), which is checked here on the broker's own wording.
 */
import assert from 'node:assert/strict'
import {test} from 'node:test'

import {accessRefusal} from '../../../src/lib/brokers/rabbitmq/support.js'
import {AuthError, ExitCode} from '../../../src/lib/errors.js'

const url = 'amqp://app:***@mq:5672/orders'

test('a newer broker names the kind: it is used, whatever the operation suggested', () => {
  const refusal = accessRefusal("ACCESS_REFUSED - write access to exchange 'amq.default' in vhost 'orders' refused for user 'app'", 'publish to "q"', url, 'write')
  assert.ok(refusal instanceof AuthError)
  assert.equal(refusal.exitCode, ExitCode.auth)
  assert.equal(refusal.code, 'permission')
  assert.match(refusal.message, /user "app" has no write permission on exchange "amq\.default" in vhost "orders" \(its write regex must match that name/)
  assert.match(accessRefusal("ACCESS_REFUSED - read access to queue 'app.dlq' in vhost 'orders' refused for user 'app'", 'drain "app.dlq"', url, 'configure')!.message, /no read permission on queue "app\.dlq"/)
})

test('3.10 does not name the kind: the operation says which one it needed', () => {
  const refusal = accessRefusal("ACCESS_REFUSED - access to queue 'other' in vhost 'orders' refused for user 'app'", 'inspect queue "other"', url, 'configure')
  assert.match(refusal!.message, /no configure permission on queue "other"/)
  assert.match(accessRefusal("ACCESS_REFUSED - access to queue 'other' in vhost 'orders' refused for user 'app'", 'check queue "other"', url)!.message, /no permission on queue "other" .*configure, write or read regex/)
})

test('other refusals are permission errors in the broker\'s words; other errors are not refusals', () => {
  assert.match(accessRefusal('ACCESS_REFUSED - operation not permitted on the default exchange', 'publish to "q"', url)!.message, /RabbitMQ refused to publish to "q" on amqp:\/\/app:\*\*\*@mq:5672\/orders: ACCESS_REFUSED/)
  assert.equal(accessRefusal("NOT_FOUND - no queue 'q' in vhost 'orders'", 'check queue "q"', url), undefined)
})
