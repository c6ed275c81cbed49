/**
 * Binding conformance, driven by the official manifest (spec-broker-bindings.md). Every
 * projection block and every attempts_reconciliation case in the manifest becomes a test here,
 * so a case added upstream is a new test and a renamed block fails instead of running nothing.
 * The manifest directory is ../shared/conformance beside the repo, or $BQ_CONFORMANCE_DIR.
 */
import {describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {existsSync, readFileSync} from 'node:fs'
import path from 'node:path'
import type {EnvelopeFields} from '../../src/lib/envelope/fields.js'
import {artemisMessageFields, reconcileArtemisAttempts} from '../../src/lib/brokers/artemis/binding.js'
import {kafkaHeaders, kafkaTimestamp, reconcileKafkaAttempts} from '../../src/lib/brokers/kafka/binding.js'
import {pulsarProperties, reconcilePulsarAttempts} from '../../src/lib/brokers/pulsar/binding.js'
import {rabbitPublishOptions} from '../../src/lib/brokers/rabbitmq/binding.js'
import {reconcileServiceBusAttempts, serviceBusMessageFields} from '../../src/lib/brokers/service-bus/binding.js'
import {reconcileSqsAttempts, sqsMessageAttributes} from '../../src/lib/brokers/sqs/binding.js'
import {redisNativeFields} from '../../src/lib/brokers/redis/binding.js'
import {fieldsFromFixture} from '../support/fixture-fields.js'
import {conformanceDir, loadManifest} from '../support/conformance.js'

import type {Json} from '../support/conformance.js'

const manifest = loadManifest()

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function object(value: unknown, where: string): Json {
  assert.ok(isObject(value), `${where} must be an object in the manifest`)
  return value
}

/** The fixture a projection block names, as fields plus its raw `meta.created_at`. */
function fixtureOf(projection: Json, where: string): {fields: EnvelopeFields; createdAt: number} {
  assert.equal(typeof projection.envelope_file, 'string', `${where}.envelope_file must be a string`)
  const file = path.join(conformanceDir, projection.envelope_file as string)
  assert.ok(existsSync(file), `${where}.envelope_file ${file} does not exist`)
  const raw = object(JSON.parse(readFileSync(file, 'utf8')), file)
  return {fields: fieldsFromFixture(file), createdAt: object(raw.meta, `${file} meta`).created_at as number}
}

/** Compares manifest keys to our output through a key map; a key we do not know fails. */
function assertMapped(expected: Json, actual: Json, keys: Record<string, string>, where: string): void {
  for (const [key, value] of Object.entries(expected)) {
    assert.ok(key in keys, `${where}: manifest expects "${key}", which this test does not map yet`)
    assert.deepEqual(actual[keys[key]], value, `${where}.${key}`)
  }
}

/** A native counter from a case, restricted to the JSON types the binding's function accepts. */
function nativeOf(value: unknown, allowed: ('string' | 'number' | 'null')[], where: string): string | number | null {
  const kind = value === null ? 'null' : typeof value
  assert.ok((allowed as string[]).includes(kind), `${where} must be ${allowed.join(' or ')}, got ${JSON.stringify(value)}`)
  return value as string | number | null
}

interface BindingRunner {
  projectionKey: string
  /** Keys of the projection block this runner checks; anything new in the manifest fails loudly. */
  checkedKeys: string[]
  checkProjection(projection: Json, fixture: {fields: EnvelopeFields; createdAt: number}): void
  /** Absent where the manifest has no consume-side rule (rabbitmq: runtime-specific). */
  reconcile?: {nativeKey: string; run(bodyAttempts: number, native: unknown, where: string): number}
}

const runners: Record<string, BindingRunner> = {
  sqs: {
    projectionKey: 'attribute_projection',
    checkedKeys: ['message_attributes'],
    checkProjection(projection, {fields}) {
      assert.deepEqual(sqsMessageAttributes(fields), projection.message_attributes)
    },
    reconcile: {
      nativeKey: 'approximate_receive_count',
      run: (body, native, where) => reconcileSqsAttempts(body, nativeOf(native, ['string', 'number', 'null'], where)),
    },
  },
  asb: {
    projectionKey: 'property_projection',
    checkedKeys: ['message', 'application_properties'],
    checkProjection(projection, {fields}) {
      const message = serviceBusMessageFields(fields)
      const keys = {subject: 'subject', correlation_id: 'correlationId', message_id: 'messageId', content_type: 'contentType'}
      assertMapped(object(projection.message, 'asb.message'), {...message}, keys, 'asb.message')
      assert.deepEqual(message.applicationProperties, projection.application_properties)
    },
    reconcile: {
      nativeKey: 'delivery_count',
      run: (body, native, where) => reconcileServiceBusAttempts(body, nativeOf(native, ['number', 'null'], where) as number | null),
    },
  },
  pulsar: {
    projectionKey: 'property_projection',
    checkedKeys: ['properties'],
    checkProjection(projection, {fields}) {
      assert.deepEqual(pulsarProperties(fields), projection.properties)
    },
    reconcile: {
      nativeKey: 'redelivery_count',
      run: (body, native, where) => reconcilePulsarAttempts(body, nativeOf(native, ['number', 'null'], where) as number | null),
    },
  },
  kafka: {
    projectionKey: 'property_projection',
    checkedKeys: ['headers'],
    checkProjection(projection, {fields, createdAt}) {
      assert.deepEqual(kafkaHeaders(fields), projection.headers)
      assert.equal(kafkaTimestamp(fields), String(createdAt), 'record timestamp mirrors meta.created_at (Unix ms)')
    },
    reconcile: {
      nativeKey: 'header_attempts',
      run(body, native, where) {
        const header = nativeOf(native, ['string', 'number', 'null'], where)
        const result = reconcileKafkaAttempts(body, header)
        if (header !== null) {
          // On the wire a header is UTF-8 bytes; every decoded form must agree.
          assert.equal(reconcileKafkaAttempts(body, String(header)), result, `${where} as a string`)
          assert.equal(reconcileKafkaAttempts(body, Buffer.from(String(header))), result, `${where} as bytes`)
        } else {
          assert.equal(reconcileKafkaAttempts(body, undefined), result, `${where} as an absent header`)
        }
        return result
      },
    },
  },
  artemis: {
    projectionKey: 'property_projection',
    checkedKeys: ['jms_type_annotation', 'jms_type', 'correlation_id', 'properties'],
    checkProjection(projection, {fields, createdAt}) {
      const message = artemisMessageFields(fields)
      const annotation = projection.jms_type_annotation as string
      assert.equal((message.message_annotations as Json)[annotation], projection.jms_type, `annotation ${annotation}`)
      assert.equal(message.correlation_id, projection.correlation_id)
      assert.deepEqual(message.application_properties, projection.properties)
      assert.equal(message.creation_time.getTime(), createdAt, 'creation-time mirrors meta.created_at')
    },
    reconcile: {
      nativeKey: 'delivery_count',
      run: (body, native, where) => reconcileArtemisAttempts(body, nativeOf(native, ['number', 'null'], where) as number | null),
    },
  },
  rabbitmq: {
    projectionKey: 'property_projection',
    checkedKeys: ['properties', 'headers'],
    checkProjection(projection, {fields}) {
      const options = rabbitPublishOptions(fields)
      const keys = {type: 'type', correlation_id: 'correlationId', message_id: 'messageId', app_id: 'appId', content_type: 'contentType'}
      assertMapped(object(projection.properties, 'rabbitmq.properties'), {...options}, keys, 'rabbitmq.properties')
      assert.deepEqual(options.headers, projection.headers)
    },
  },
}

for (const [blockName, runner] of Object.entries(runners)) {
  describe(`${blockName} binding (manifest)`, () => {
    const block = manifest[blockName]
    const reconciliation = isObject(block) ? block.attempts_reconciliation : undefined
    const cases = isObject(reconciliation) && Array.isArray(reconciliation.cases) ? reconciliation.cases : []

    test('block discovered in the manifest', () => {
      const found = object(block, blockName)
      object(found[runner.projectionKey], `${blockName}.${runner.projectionKey}`)
      if (runner.reconcile) {
        assert.ok(cases.length >= 1, `${blockName}.attempts_reconciliation.cases must hold at least one case`)
      } else {
        assert.equal(found.attempts_reconciliation, undefined, `${blockName} gained attempts_reconciliation cases; wire a runner for them`)
      }
    })

    test(`${runner.projectionKey} matches exactly`, () => {
      const projection = object(object(block, blockName)[runner.projectionKey], `${blockName}.${runner.projectionKey}`)
      const unchecked = Object.keys(projection).filter((key) => !['description', 'envelope_file', ...runner.checkedKeys].includes(key))
      assert.deepEqual(unchecked, [], `${blockName}.${runner.projectionKey} has expectations this test does not check`)
      runner.checkProjection(projection, fixtureOf(projection, `${blockName}.${runner.projectionKey}`))
    })

    for (const [index, entry] of cases.entries()) {
      const name = isObject(entry) && typeof entry.name === 'string' ? entry.name : `#${index}`
      test(`attempts_reconciliation: ${name}`, () => {
        const where = `${blockName}.attempts_reconciliation.cases[${name}]`
        const reconcile = runner.reconcile
        assert.ok(reconcile, `${blockName} has no reconciliation runner`)
        const tc = object(entry, where)
        assert.ok(reconcile.nativeKey in tc, `${where} has no ${reconcile.nativeKey}`)
        assert.equal(typeof tc.body_attempts, 'number', `${where}.body_attempts`)
        assert.equal(typeof tc.expected_attempts, 'number', `${where}.expected_attempts`)
        const actual = reconcile.run(tc.body_attempts as number, tc[reconcile.nativeKey], `${where}.${reconcile.nativeKey}`)
        assert.equal(actual, tc.expected_attempts, where)
      })
    }
  })
}

describe('redis binding (manifest)', () => {
  test('payload_identity: no native metadata to project', (t) => {
    const identity = object(object(manifest.redis, 'redis').payload_identity, 'redis.payload_identity')
    fixtureOf(identity, 'redis.payload_identity')
    assert.deepEqual(redisNativeFields(), {})
    t.diagnostic('byte-for-byte payload identity (produce -> reserve) is covered by the Redis adapter tests')
  })
})
