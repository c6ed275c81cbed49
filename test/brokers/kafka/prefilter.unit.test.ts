/**
 * The browse prefilter on Kafka (BrowseOptions.prefilter): bq trace's byte test decides which
 * records the adapter builds in full. It must keep every record trace could match, by its body or
 * by the bq- headers the binding projects the trace id and meta.id to, in any spelling.
 */
import assert from 'node:assert/strict'
import {describe, test} from 'node:test'

import {RecordPrefilter, passesPrefilter, toBrokerMessage} from '../../../src/lib/brokers/kafka/records.js'
import type {KafkaRecord} from '../../../src/lib/brokers/kafka/client/index.js'
import {matchOf, traceTarget} from '../../../src/lib/ops/trace-id.js'
import {browsePrefilter, couldMatch} from '../../../src/lib/ops/trace-prefilter.js'

const uuid = '0f8fad5b-d9cb-469f-a165-70867728950e'
const other = '6ba7b810-9dad-11d1-80b4-00c04fd430c8'

const record = (value: string, headers: KafkaRecord['headers'] = {}): KafkaRecord => ({partition: 0, offset: 0, key: null, value: Buffer.from(value), headers, timestamp: 1})

/** What trace's own look at a built message decides (trace-scan.ts), for comparison. */
function traceWouldLook(item: KafkaRecord, id: string): boolean {
  const message = toBrokerMessage('t', 0, item)
  const target = traceTarget(id)
  return couldMatch(message.body, target) || matchOf(target, message.native.traceId, message.native.id) !== undefined
}

describe('kafka browse prefilter', () => {
  const cases: Array<[string, KafkaRecord]> = [
    ['the id in the body', record(`{"meta":{"trace_id":"${uuid}"}}`)],
    ['another id in the body', record(`{"meta":{"trace_id":"${other}"}}`)],
    ['the id only in bq-trace-id, upper case', record('not json', {'bq-trace-id': Buffer.from(uuid.toUpperCase())})],
    ['the id only in bq-message-id', record('{}', {'bq-message-id': Buffer.from(uuid)})],
    ['the id in a repeated header, last value', record('{}', {'bq-trace-id': [Buffer.from(other), Buffer.from(uuid)]})],
    ['the id in a repeated header, first value only', record('{}', {'bq-trace-id': [Buffer.from(uuid), Buffer.from(other)]})],
    ['other headers only', record('{}', {'bq-trace-id': Buffer.from(other), app: 'x'})],
  ]
  for (const [name, item] of cases) {
    test(`keeps every record trace would look at: ${name}`, () => {
      const passes = passesPrefilter(item, browsePrefilter(traceTarget(uuid)))
      if (traceWouldLook(item, uuid)) assert.ok(passes)
      assert.equal(passes, !name.startsWith('another') && !name.startsWith('other'))
    })
  }

  test('one test over a whole fetch answer stands for its bodies; headers are still looked at', () => {
    const answer = Buffer.from(`{"a":1}{"trace_id":"${uuid}"}{"b":2}`)
    const inAnswer = (from: number, to: number, headers: KafkaRecord['headers'] = {}): KafkaRecord => ({...record(''), value: answer.subarray(from, to), headers, fetched: answer})
    const quiet = Buffer.from('{"a":1}{"b":2}')
    const filter = RecordPrefilter.of(browsePrefilter(traceTarget(uuid)))
    assert.ok(!filter.passes(inAnswer(0, 7)))
    assert.ok(filter.passes(inAnswer(7, answer.length - 7)))
    assert.ok(!filter.passes({...record(''), value: quiet.subarray(0, 7), fetched: quiet}))
    assert.ok(filter.passes({...record(''), value: quiet.subarray(7), headers: {'bq-trace-id': Buffer.from(uuid)}, fetched: quiet}))
  })

  test('a non-UUID id is found in the header that carries it', () => {
    assert.ok(passesPrefilter(record('{}', {'bq-trace-id': Buffer.from('order-1042')}), browsePrefilter(traceTarget('order-1042'))))
    assert.ok(!passesPrefilter(record('{}', {'bq-trace-id': Buffer.from('order-1043')}), browsePrefilter(traceTarget('order-1042'))))
  })
})
