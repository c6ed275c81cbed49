/**
 * Binding projections beyond the manifest: native → fields round trips for every broker, the
 * replay-bypass marker on each, delays, and tolerance of the odd values client libraries hand back.
 */
import {describe, test} from 'node:test'
import assert from 'node:assert/strict'
import type {MessageProperties} from 'amqplib'
import {REPLAY_BYPASS_HEADER, type EnvelopeFields, type NativeFields} from '../../src/lib/envelope/fields.js'
import {artemisMessageFields, artemisNativeFields, reconcileArtemisAttempts} from '../../src/lib/brokers/artemis/binding.js'
import {kafkaHeaders, kafkaNativeFields, kafkaTimestamp, reconcileKafkaAttempts} from '../../src/lib/brokers/kafka/binding.js'
import {pulsarNativeFields, pulsarProperties, reconcilePulsarAttempts} from '../../src/lib/brokers/pulsar/binding.js'
import {rabbitNativeFields, rabbitPublishOptions, reconcileRabbitAttempts} from '../../src/lib/brokers/rabbitmq/binding.js'
import {reconcileServiceBusAttempts, serviceBusMessageFields, serviceBusNativeFields} from '../../src/lib/brokers/service-bus/binding.js'
import {reconcileSqsAttempts, sqsMessageAttributes, sqsNativeFields} from '../../src/lib/brokers/sqs/binding.js'
import {redisNativeFields} from '../../src/lib/brokers/redis/binding.js'

const order: EnvelopeFields = Object.freeze({
  job: 'urn:babel:orders:created',
  traceId: '7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b',
  id: 'f1e2d3c4-b5a6-4789-90ab-cdef01234567',
  queue: 'orders',
  lang: 'php',
  schemaVersion: 1,
  createdAt: 1749132727123,
  attempts: 0,
})
const retried: EnvelopeFields = Object.freeze({
  ...order,
  job: 'urn:babel:catalog:item.indexed',
  id: 'b2c3d4e5-f607-4890-a1b2-c3d4e5f60718',
  lang: 'python',
  attempts: 2,
})

/** Values a misbehaving producer or client library could put where a count belongs. */
const garbageCounts: unknown[] = ['abc', '', ' ', '-1', '1.5', '1e3', '0x10', -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, -3n, {}, [], true, null, undefined, new Date(0)]

function pick(fields: EnvelopeFields, keys: (keyof NativeFields & keyof EnvelopeFields)[]): NativeFields {
  return Object.fromEntries(keys.map((key) => [key, fields[key]])) as NativeFields
}

function asBuffers(headers: Record<string, string>): Record<string, Buffer> {
  return Object.fromEntries(Object.entries(headers).map(([key, value]) => [key, Buffer.from(value, 'utf8')]))
}

/** Each broker's projection followed by its inverse, the way a consumer would see it. */
const roundTrips: Record<string, {carries: (keyof NativeFields & keyof EnvelopeFields)[]; trip(f: EnvelopeFields, bypass: boolean): NativeFields}> = {
  rabbitmq: {
    carries: ['job', 'traceId', 'id', 'lang', 'schemaVersion', 'attempts'],
    trip: (f, bypass) => rabbitNativeFields(rabbitPublishOptions(f, {bypass})),
  },
  sqs: {
    carries: ['job', 'traceId', 'id', 'lang', 'schemaVersion', 'createdAt'],
    trip: (f, bypass) => sqsNativeFields(sqsMessageAttributes(f, {bypass})),
  },
  'service-bus': {
    carries: ['job', 'traceId', 'id', 'lang', 'schemaVersion', 'createdAt'],
    trip: (f, bypass) => serviceBusNativeFields(serviceBusMessageFields(f, {bypass})),
  },
  pulsar: {
    carries: ['job', 'traceId', 'id', 'lang', 'schemaVersion', 'attempts'],
    trip: (f, bypass) => pulsarNativeFields(pulsarProperties(f, {bypass})),
  },
  kafka: {
    carries: ['job', 'traceId', 'id', 'lang', 'schemaVersion', 'attempts'],
    trip: (f, bypass) => kafkaNativeFields(asBuffers(kafkaHeaders(f, {bypass}))),
  },
  artemis: {
    carries: ['job', 'traceId', 'id', 'lang', 'schemaVersion', 'createdAt', 'attempts'],
    trip: (f, bypass) => artemisNativeFields(artemisMessageFields(f, {bypass})),
  },
}

describe('round trips: projection then inverse projection', () => {
  for (const [broker, {carries, trip}] of Object.entries(roundTrips)) {
    for (const fields of [order, retried]) {
      test(`${broker}: ${fields.job} attempts=${fields.attempts}`, () => {
        assert.deepEqual(trip(fields, false), pick(fields, carries))
      })
    }
    test(`${broker}: bypass marker survives the round trip`, () => {
      assert.deepEqual(trip(order, true), {...pick(order, carries), replayBypass: true})
    })
  }
  test('redis: no native metadata, whatever was published', () => {
    assert.deepEqual(redisNativeFields(), {})
  })
})

describe('projections are pure', () => {
  test('frozen input, identical output on every call, input untouched', () => {
    const before = JSON.stringify(order)
    for (const project of [
      () => rabbitPublishOptions(order, {bypass: true}),
      () => sqsMessageAttributes(order, {bypass: true}),
      () => serviceBusMessageFields(order, {bypass: true}),
      () => pulsarProperties(order, {bypass: true, delayMs: 10}),
      () => kafkaHeaders(order, {bypass: true}),
      () => artemisMessageFields(order, {bypass: true, delayMs: 10, nowMs: 5}),
    ]) {
      assert.deepEqual(project(), project())
    }
    assert.equal(JSON.stringify(order), before)
  })
})

describe('rabbitmq', () => {
  test('publish options: persistent JSON from babelqueue, timestamp in seconds, native-typed headers', () => {
    const options = rabbitPublishOptions(retried)
    assert.equal(options.appId, 'babelqueue')
    assert.equal(options.contentType, 'application/json')
    assert.equal(options.persistent, true)
    assert.equal(options.timestamp, 1749132727)
    assert.deepEqual(options.headers, {'x-attempts': 2, 'x-schema-version': 1, 'x-source-lang': 'python'})
  })
  test('bypass marker is the string "1" and absent unless asked for', () => {
    assert.equal(rabbitPublishOptions(order, {bypass: true}).headers[REPLAY_BYPASS_HEADER], '1')
    assert.equal(REPLAY_BYPASS_HEADER in rabbitPublishOptions(order).headers, false)
    assert.equal(REPLAY_BYPASS_HEADER in rabbitPublishOptions(order, {bypass: false}).headers, false)
  })
  test('reads amqplib MessageProperties as delivered', () => {
    const properties: MessageProperties = {
      contentType: 'application/json', contentEncoding: undefined, deliveryMode: 2, priority: undefined, replyTo: undefined,
      expiration: undefined, userId: undefined, clusterId: undefined, appId: 'babelqueue', timestamp: 1749132727,
      type: order.job, correlationId: order.traceId, messageId: order.id,
      headers: {'x-attempts': 1, 'x-schema-version': 1, 'x-source-lang': 'go', 'x-death': []},
    }
    assert.deepEqual(rabbitNativeFields(properties), {job: order.job, traceId: order.traceId, id: order.id, lang: 'go', schemaVersion: 1, attempts: 1})
  })
  test('x-attempts arrives as number, bigint, string or bytes', () => {
    for (const value of [3, 3n, '3', Buffer.from('3')]) {
      assert.equal(rabbitNativeFields({headers: {'x-attempts': value}}).attempts, 3, String(value))
    }
  })
  test('garbage headers and properties are ignored, never thrown on', () => {
    for (const value of garbageCounts) {
      assert.deepEqual(rabbitNativeFields({headers: {'x-attempts': value, 'x-schema-version': value}}), {}, String(value))
    }
    assert.deepEqual(rabbitNativeFields({}), {})
    assert.deepEqual(rabbitNativeFields({type: {}, correlationId: null, messageId: '', headers: null}), {})
  })
  test('an explicit off value of the marker is not a replay', () => {
    for (const value of ['0', 'false', 'FALSE', 'no', '', 0, false, null]) {
      assert.equal(rabbitNativeFields({headers: {[REPLAY_BYPASS_HEADER]: value}}).replayBypass, undefined, String(value))
    }
    for (const value of ['1', 'true', true, 1, Buffer.from('1')]) {
      assert.equal(rabbitNativeFields({headers: {[REPLAY_BYPASS_HEADER]: value}}).replayBypass, true, String(value))
    }
  })
  test('reconcile: max of body and a valid header, garbage ignored', () => {
    assert.equal(reconcileRabbitAttempts(1, 4), 4)
    assert.equal(reconcileRabbitAttempts(5, 2), 5)
    assert.equal(reconcileRabbitAttempts(2, '3'), 3)
    assert.equal(reconcileRabbitAttempts(2, 7n), 7)
    for (const value of garbageCounts) assert.equal(reconcileRabbitAttempts(2, value), 2, String(value))
  })
})

describe('sqs', () => {
  test('bypass marker is a String attribute "1"', () => {
    assert.deepEqual(sqsMessageAttributes(order, {bypass: true})[REPLAY_BYPASS_HEADER], {DataType: 'String', StringValue: '1'})
    assert.equal(REPLAY_BYPASS_HEADER in sqsMessageAttributes(order), false)
  })
  test('ApproximateReceiveCount is kept as the native 1-based delivery count', () => {
    assert.equal(sqsNativeFields(sqsMessageAttributes(order), '3').deliveryCount, 3)
    assert.equal(sqsNativeFields(undefined, 'abc').deliveryCount, undefined)
  })
  test('missing or odd attributes are ignored', () => {
    assert.deepEqual(sqsNativeFields(undefined), {})
    assert.deepEqual(sqsNativeFields({}, null), {})
    assert.deepEqual(
      sqsNativeFields({'bq-job': {DataType: 'String'}, 'bq-schema-version': {DataType: 'Number', StringValue: 'one'}, 'bq-created-at': {StringValue: '-5'}, 'bq-trace-id': undefined}),
      {},
    )
  })
  test('reconcile: max(body, count − 1); garbage, zero and absent counts ignored', () => {
    assert.equal(reconcileSqsAttempts(0, 4), 3)
    assert.equal(reconcileSqsAttempts(6, '2'), 6)
    for (const value of [...garbageCounts, 0, '0']) {
      assert.equal(reconcileSqsAttempts(2, value as string), 2, String(value))
    }
  })
})

describe('service bus', () => {
  test('message fields carry native-typed application properties', () => {
    const message = serviceBusMessageFields(retried, {bypass: true})
    assert.equal(message.contentType, 'application/json')
    assert.deepEqual(message.applicationProperties, {
      'bq-schema-version': 1,
      'bq-source-lang': 'python',
      'bq-created-at': 1749132727123,
      [REPLAY_BYPASS_HEADER]: '1',
    })
  })
  test('DeliveryCount is kept as the native 1-based count; odd ids are read as text', () => {
    const native = serviceBusNativeFields({correlationId: Buffer.from('trace-1'), messageId: 42, deliveryCount: 2})
    assert.deepEqual(native, {traceId: 'trace-1', id: '42', deliveryCount: 2})
  })
  test('garbage application properties are ignored', () => {
    assert.deepEqual(serviceBusNativeFields({}), {})
    assert.deepEqual(
      serviceBusNativeFields({applicationProperties: null, deliveryCount: -1, subject: undefined}),
      {},
    )
    for (const value of garbageCounts.filter((v) => !(v instanceof Date))) {
      assert.deepEqual(serviceBusNativeFields({applicationProperties: {'bq-created-at': value, 'bq-schema-version': value}, deliveryCount: value}), {}, String(value))
    }
  })
  test('reconcile: max(body, DeliveryCount − 1); garbage ignored', () => {
    assert.equal(reconcileServiceBusAttempts(1, 6), 5)
    assert.equal(reconcileServiceBusAttempts(4, 2), 4)
    for (const value of [...garbageCounts, 0, 1]) {
      assert.equal(reconcileServiceBusAttempts(2, value as number), 2, String(value))
    }
  })
})

describe('pulsar', () => {
  test('bq-delay mirrors the delay in milliseconds; an impossible delay is refused', () => {
    assert.equal(pulsarProperties(order, {delayMs: 1500})['bq-delay'], '1500')
    assert.equal('bq-delay' in pulsarProperties(order), false)
    assert.throws(() => pulsarProperties(order, {delayMs: -1}), RangeError)
    assert.throws(() => pulsarProperties(order, {delayMs: Number.NaN}), RangeError)
  })
  test('RedeliveryCount is kept as the native 0-based count', () => {
    assert.equal(pulsarNativeFields(pulsarProperties(order), 0).deliveryCount, 0)
    assert.equal(pulsarNativeFields(undefined, 4).deliveryCount, 4)
  })
  test('garbage properties are ignored', () => {
    assert.deepEqual(pulsarNativeFields(undefined), {})
    assert.deepEqual(pulsarNativeFields({'bq-attempts': '-1', 'bq-schema-version': 'v1', 'bq-job': ''}, Number.NaN), {})
  })
  test('reconcile: max(body, RedeliveryCount) with no −1; garbage ignored', () => {
    assert.equal(reconcilePulsarAttempts(1, 3), 3)
    assert.equal(reconcilePulsarAttempts(4, 1), 4)
    for (const value of garbageCounts) assert.equal(reconcilePulsarAttempts(2, value as number), 2, String(value))
  })
})

describe('kafka', () => {
  test('record timestamp is meta.created_at in Unix ms, as a string', () => {
    assert.equal(kafkaTimestamp(order), '1749132727123')
  })
  test('bypass marker header', () => {
    assert.equal(kafkaHeaders(order, {bypass: true})[REPLAY_BYPASS_HEADER], '1')
    assert.equal(REPLAY_BYPASS_HEADER in kafkaHeaders(order), false)
  })
  test('a repeated header: the last value wins', () => {
    assert.equal(kafkaNativeFields({'bq-attempts': [Buffer.from('1'), '4']}).attempts, 4)
    assert.deepEqual(kafkaNativeFields({'bq-attempts': []}), {})
  })
  test('garbage headers are ignored', () => {
    assert.deepEqual(kafkaNativeFields(undefined), {})
    assert.deepEqual(kafkaNativeFields({'bq-attempts': 'x', 'bq-schema-version': Buffer.from('-1'), 'bq-job': undefined}), {})
  })
  test('reconcile: a valid header is authoritative, even below the body; otherwise the body', () => {
    assert.equal(reconcileKafkaAttempts(5, '1'), 1)
    assert.equal(reconcileKafkaAttempts(5, Buffer.from('0')), 0)
    assert.equal(reconcileKafkaAttempts(1, 4), 4)
    for (const value of garbageCounts) assert.equal(reconcileKafkaAttempts(3, value as string), 3, String(value))
  })
})

describe('artemis', () => {
  test('JMS-native slots and string bq_ properties', () => {
    const message = artemisMessageFields(retried)
    assert.deepEqual(message.message_annotations, {'x-opt-jms-type': retried.job})
    assert.equal(message.subject, retried.job, 'the URN also in the subject, which Artemis maps to JMSType')
    assert.equal(artemisNativeFields({subject: retried.job}).job, retried.job, 'a JMS producer\'s JMSType (the subject alone) reads as the URN')
    assert.equal(message.correlation_id, retried.traceId)
    assert.equal(message.message_id, retried.id)
    assert.equal(message.content_type, 'application/json')
    assert.ok(message.creation_time instanceof Date)
    assert.equal(message.creation_time.getTime(), retried.createdAt)
    assert.deepEqual(message.application_properties, {bq_schema_version: '1', bq_source_lang: 'python', bq_attempts: '2', bq_app_id: 'babelqueue'})
  })
  test('bypass marker uses the cross-SDK hyphenated name; the old underscore spelling still reads as a replay', () => {
    const props: Record<string, unknown> = {...artemisMessageFields(order, {bypass: true}).application_properties}
    assert.equal(props[REPLAY_BYPASS_HEADER], '1')
    assert.equal('bq_replay_bypass' in props, false)
    assert.equal(artemisNativeFields({application_properties: {[REPLAY_BYPASS_HEADER]: '1'}}).replayBypass, true)
    assert.equal(artemisNativeFields({application_properties: {bq_replay_bypass: '1'}}).replayBypass, true)
    assert.equal(artemisNativeFields({application_properties: {}}).replayBypass, undefined)
  })
  test('delay: absolute delivery-time annotation plus the bq_delay mirror', () => {
    const message = artemisMessageFields(order, {delayMs: 2500, nowMs: 1_000_000})
    assert.equal(message.message_annotations['x-opt-delivery-time'], 1_002_500)
    assert.equal(message.application_properties.bq_delay, '2500')
    assert.throws(() => artemisMessageFields(order, {delayMs: -5}), RangeError)
  })
  test('creation-time as a Date or a number; delivery-count kept 0-based', () => {
    assert.equal(artemisNativeFields({creation_time: new Date(1749132727123)}).createdAt, 1749132727123)
    assert.equal(artemisNativeFields({creation_time: 1749132727123}).createdAt, 1749132727123)
    assert.equal(artemisNativeFields({delivery_count: 0}).deliveryCount, 0)
  })
  test('garbage values are ignored', () => {
    assert.deepEqual(artemisNativeFields({}), {})
    assert.deepEqual(
      artemisNativeFields({
        message_annotations: null,
        application_properties: {bq_attempts: 'many', bq_schema_version: -1},
        creation_time: new Date('not a date'),
        delivery_count: -2,
        correlation_id: {},
      }),
      {},
    )
  })
  test('reconcile: max(body, delivery-count) with no −1; garbage ignored', () => {
    assert.equal(reconcileArtemisAttempts(0, 2), 2)
    assert.equal(reconcileArtemisAttempts(5, 1), 5)
    for (const value of garbageCounts) assert.equal(reconcileArtemisAttempts(2, value as number), 2, String(value))
  })
})
