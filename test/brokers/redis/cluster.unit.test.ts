/** Hash slots and the slot-local staging names bq uses on a Redis Cluster (cluster.ts). */
import {test} from 'node:test'
import assert from 'node:assert/strict'

import {hashedPart, keySlot, sameSlot, stagingBase} from '../../../src/lib/brokers/redis/cluster.js'

test('keySlot matches CLUSTER KEYSLOT (values read from redis-server 7.0)', () => {
  const known: Array<[string, number]> = [
    ['{orders}', 105],
    ['orders', 105],
    ['queues:{orders}:processing', 105],
    ['foo', 12182],
    ['{user1000}.following', 3443],
    ['a{b', 13340],
    ['x{}y', 16116],
    ['123456789', 12739],
  ]
  for (const [key, slot] of known) assert.equal(keySlot(key), slot, key)
})

test('only the first non-empty {…} is hashed', () => {
  assert.equal(hashedPart('{orders}.dlq'), 'orders')
  assert.equal(hashedPart('x{}y{z}'), 'x{}y{z}')
  assert.equal(hashedPart('plain'), 'plain')
})

test('staging keys share the slot of their list, tagged or not', () => {
  assert.equal(stagingBase('{orders}.dlq', '{orders}.dlq'), '{orders}.dlq')
  assert.equal(stagingBase('orders.dlq', 'orders.dlq'), '{orders.dlq}')
  assert.equal(stagingBase('a{b', 'a{b'), '{a{b}')
  for (const list of ['{orders}.dlq', 'orders.dlq', 'queues:orders.dlq', 'a{b', 'ü-queue']) {
    const base = stagingBase(list, list)
    assert.ok(sameSlot([list, `${base}:processing`, `${base}:bq-held`, `${base}:bq-lock`]), list)
  }
  // An untagged name with a "}" has no key in its slot that bq could name: refused, with the fix.
  assert.throws(() => stagingBase('x{}y', 'x{}y'), /hash tag such as \{xy\}/)
})
