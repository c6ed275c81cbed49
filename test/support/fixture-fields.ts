/** EnvelopeFields of a conformance fixture, read through the codec (so the tests exercise it too). */
import {readFileSync} from 'node:fs'
import {decode, fieldsOf} from '../../src/lib/envelope/index.js'
import type {EnvelopeFields} from '../../src/lib/envelope/fields.js'

export function fieldsFromFixture(path: string): EnvelopeFields {
  const envelope = decode(readFileSync(path))
  if (envelope.urn === undefined || envelope.id === undefined) throw new Error(`${path}: fixture lacks a URN or meta.id`)
  return fieldsOf(envelope)
}
