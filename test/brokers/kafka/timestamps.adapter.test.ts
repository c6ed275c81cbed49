/** When bq may stamp a Kafka record with meta.created_at (kafka/timestamps.ts): pure, no broker. */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {DEFAULT_RULES, rulesFromConfig, timestampIsSafe} from '../../../src/lib/brokers/kafka/timestamps.js'

const DAY = 86_400_000
const now = 1_800_000_000_000

describe('kafka record timestamps', () => {
  it('reads the rules from a topic configuration', () => {
    const config = (entries: Record<string, string>) => rulesFromConfig(new Map(Object.entries(entries)))
    assert.deepEqual(config({'cleanup.policy': 'delete', 'retention.ms': String(DAY), 'message.timestamp.type': 'CreateTime', 'message.timestamp.after.max.ms': '3600000', 'message.timestamp.before.max.ms': '9223372036854775807'}), {
      retentionMs: DAY,
      beforeMaxMs: Number('9223372036854775807'),
      afterMaxMs: 3_600_000,
      logAppendTime: false,
    })
    assert.equal(config({'cleanup.policy': 'compact', 'retention.ms': String(DAY)}).retentionMs, undefined)
    assert.equal(config({'cleanup.policy': 'compact,delete', 'retention.ms': String(DAY)}).retentionMs, DAY)
    assert.equal(config({'retention.ms': '-1'}).retentionMs, undefined)
    assert.equal(config({}).retentionMs, 7 * DAY)
    assert.equal(config({'message.timestamp.type': 'LogAppendTime'}).logAppendTime, true)
    assert.equal(config({'message.timestamp.difference.max.ms': '5000'}).beforeMaxMs, 5000)
  })

  it('keeps created_at while the record would live a good while, and the broker accepts it', () => {
    const rules = {retentionMs: 7 * DAY, afterMaxMs: 3_600_000, logAppendTime: false}
    assert.ok(timestampIsSafe(now - 5 * DAY, now, rules))
    assert.ok(!timestampIsSafe(now - 6.5 * DAY, now, rules), 'less than a day left before deletion')
    assert.ok(!timestampIsSafe(now - 30 * DAY, now, rules))
    assert.ok(timestampIsSafe(now + 10 * 60_000, now, rules))
    assert.ok(!timestampIsSafe(now + 2 * 3_600_000, now, rules), 'beyond message.timestamp.after.max.ms')
    // Short retention: half of it must be left.
    assert.ok(timestampIsSafe(now - 20 * 60_000, now, {retentionMs: 3_600_000, logAppendTime: false}))
    assert.ok(!timestampIsSafe(now - 40 * 60_000, now, {retentionMs: 3_600_000, logAppendTime: false}))
    assert.ok(!timestampIsSafe(now - 2 * DAY, now, {beforeMaxMs: DAY, logAppendTime: false}))
    assert.ok(timestampIsSafe(now - 365 * DAY, now, {logAppendTime: false}))
    assert.ok(timestampIsSafe(now - 365 * DAY, now, {...DEFAULT_RULES, logAppendTime: true}))
  })
})
