/**
 * The envelope and payload-schema blocks of the official manifest, as tests. Every case in the
 * manifest becomes a test, so a new case upstream is a new test here.
 */
import {describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {readFileSync} from 'node:fs'

import {decode, resetForRedrive, validateEnvelopeText} from '../../src/lib/envelope/index.js'
import {SchemaRegistry} from '../../src/lib/schema/registry.js'
import {fixturePath, loadManifest} from '../support/conformance.js'
import type {Json} from '../support/conformance.js'

const manifest = loadManifest()
const cases = manifest.cases as Json[]
const payload = manifest.payload_schema as {schema: Json; cases: Array<{name: string; valid: boolean; data: unknown}>}

describe('envelope cases (manifest)', () => {
  test('the manifest has envelope cases', () => {
    assert.ok(Array.isArray(cases) && cases.length > 0, 'manifest.cases is missing or empty')
  })

  for (const entry of cases) {
    const name = entry.name as string
    const bytes = readFileSync(fixturePath(entry.file as string))
    const text = bytes.toString('utf8')

    test(`${name}: validate says ${entry.valid ? 'valid' : 'invalid'}`, () => {
      const errors = validateEnvelopeText(text).problems.filter((p) => p.severity === 'error')
      if (entry.valid) assert.deepEqual(errors, [], `${name} should be valid`)
      else assert.ok(errors.length > 0, `${name} should be invalid: ${entry.reason}`)
    })

    test(`${name}: decode and re-encode is byte-identical`, () => {
      assert.ok(decode(bytes).toBuffer().equals(bytes))
    })

    if (!entry.valid) continue
    const expect = entry.expect as Json
    test(`${name}: decoded values match the manifest`, () => {
      const envelope = decode(bytes)
      const value = JSON.parse(text)
      assert.equal(envelope.urn, expect.urn)
      assert.deepEqual(value.data, expect.data)
      assert.equal(envelope.attempts, expect.attempts)
      assert.equal(envelope.lang, expect.lang)
      assert.equal(envelope.schemaVersion, expect.schema_version)
      if (expect.dead_letter) {
        const expected = expect.dead_letter as Json
        const block = envelope.deadLetter
        assert.ok(block, 'dead_letter block expected')
        if ('reason' in expected) assert.equal(block.reason, expected.reason)
        if ('original_queue' in expected) assert.equal(block.originalQueue, expected.original_queue)
      } else {
        assert.equal(envelope.deadLetter, undefined)
      }
    })

    test(`${name}: resetForRedrive keeps job, trace_id, data and meta byte for byte`, () => {
      const envelope = decode(bytes)
      const reset = resetForRedrive(envelope)
      for (const key of ['job', 'urn', 'trace_id', 'data', 'meta']) assert.equal(reset.raw(key), envelope.raw(key), key)
      assert.equal(reset.raw('attempts'), '0')
      assert.equal(reset.raw('dead_letter'), undefined)
      assert.deepEqual(validateEnvelopeText(reset.text).problems.filter((p) => p.severity === 'error'), [])
    })
  }
})

describe('payload_schema (manifest)', () => {
  const urn = 'urn:babel:conformance:payload'
  const registry = SchemaRegistry.fromSchema(urn, payload.schema)

  test('the manifest has payload_schema cases', () => {
    assert.ok(payload.cases.length > 0)
  })
  for (const entry of payload.cases) {
    test(`${entry.name}: ${entry.valid ? 'valid' : 'invalid'}`, () => {
      const problems = registry.check(urn, entry.data)
      assert.ok(problems !== undefined)
      assert.equal(problems.length === 0, entry.valid, JSON.stringify(problems))
    })
  }
})
