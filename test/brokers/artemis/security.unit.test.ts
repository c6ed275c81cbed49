/** Artemis's security answers as exit 6 permission errors naming the user, address and permission. */
import assert from 'node:assert/strict'
import {test} from 'node:test'

import {securityRefusal} from '../../../src/lib/brokers/artemis/connection.js'
import {AuthError} from '../../../src/lib/errors.js'

test('AMQ229032 (send, create_address) and AMQ229213 (browse) name the permission and the user', () => {
  const send = securityRefusal({condition: 'amqp:unauthorized-access'}, "AMQ119017: not authorized to create producer, AMQ229032: User: ops does not have permission='SEND' on address orders (amqp:unauthorized-access)", 'send to "orders"')
  assert.ok(send instanceof AuthError)
  assert.equal(send.code, 'permission')
  assert.match(send.message, /^Artemis refused to send to "orders" \(the send permission for user ops\)/)
  // Artemis reports a refused auto-create as an internal error; the text still says what is missing.
  const create = securityRefusal({condition: 'amqp:internal-error'}, "AMQ229032: User: ops does not have permission='CREATE_ADDRESS' on address new.q (amqp:internal-error)", 'send to "new.q"')
  assert.match(create!.message, /the create_address permission for user ops/)
  const browse = securityRefusal({condition: 'amqp:unauthorized-access'}, "AMQ119015: not authorized to create consumer, AMQ229213: User: ops does not have permission='BROWSE' for queue q on address q", 'read "q"')
  assert.match(browse!.message, /the browse permission for user ops/)
})

test('anything else is not a refusal', () => {
  assert.equal(securityRefusal({condition: 'amqp:not-found'}, 'AMQ229017: Queue q does not exist', 'read "q"'), undefined)
  assert.equal(securityRefusal(undefined, 'no reason given', 'read "q"'), undefined)
})
