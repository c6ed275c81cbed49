/** Which of a drain's sent acks a subscription cursor shows applied (sent-acks.ts): pure, no broker. */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {SentAcks} from '../../../src/lib/brokers/pulsar/sent-acks.js'

const acked = (...positions: Array<[number, number] | undefined>) => {
  const sent = new SentAcks()
  for (const position of positions) sent.add(position === undefined ? undefined : {ledger: position[0], entry: position[1]})
  return sent
}

describe('pulsar sent acks against the cursor', () => {
  it('counts an ack as applied at or before the mark-delete position, or inside a deleted range (open start, closed end)', () => {
    const sent = acked([7, 0], [7, 1], [7, 2], [7, 3], [7, 4], [7, 5], [7, 9], [7, 10], [8, 0], [8, 1])
    assert.equal(sent.size, 10)
    // 7:0..7:1 by the mark-delete position; 7:3, 7:4 and 7:10, 8:0 by the ranges; 7:2, 7:5, 7:9, 8:1 not.
    assert.equal(sent.notApplied({markDeletePosition: '7:1', individuallyDeletedMessages: '[(7:2..7:4], (7:9..8:0]]'}), 4)
    assert.equal(sent.notApplied({markDeletePosition: '8:1', individuallyDeletedMessages: '[]'}), 0)
    assert.equal(sent.notApplied({markDeletePosition: '6:99'}), 10)
  })

  it('reads ranges in any order and across ledgers', () => {
    const sent = acked([3, 5], [4, 0], [4, 7], [5, 2])
    assert.equal(sent.notApplied({markDeletePosition: '3:0', individuallyDeletedMessages: '[(4:6..5:2], (3:4..4:0]]'}), 0)
    assert.equal(sent.notApplied({markDeletePosition: '3:0', individuallyDeletedMessages: '[(4:7..5:2], (3:5..4:0]]'}), 2)
  })

  it('counts every message of a batch entry until the whole entry is deleted', () => {
    const sent = acked([7, 4], [7, 4], [7, 4])
    assert.equal(sent.notApplied({markDeletePosition: '7:3'}), 3)
    assert.equal(sent.notApplied({markDeletePosition: '7:3', individuallyDeletedMessages: '[(7:3..7:4]]'}), 0)
  })

  it('never calls an undecodable id applied, and counts every ack when the subscription is gone', () => {
    const sent = acked([7, 1], undefined)
    assert.equal(sent.notApplied({markDeletePosition: '9:0'}), 1)
    assert.equal(sent.notApplied(undefined), 2)
  })

  it('keeps many acks across growth', () => {
    const sent = new SentAcks()
    for (let entry = 0; entry < 5000; entry++) sent.add({ledger: 11, entry})
    assert.equal(sent.size, 5000)
    assert.equal(sent.notApplied({markDeletePosition: '11:2499', individuallyDeletedMessages: '[(11:2999..11:4999]]'}), 500)
  })
})
