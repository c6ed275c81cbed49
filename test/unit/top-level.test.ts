/**
 * The shallow top-level scan (src/lib/envelope/top-level.ts) must find exactly the members and
 * spans the lossless tree finds, or a redrive would splice the wrong bytes; and the values the
 * codec reads through JSON.parse must be the ones the tree gives.
 */
import assert from 'node:assert/strict'
import {readdirSync, readFileSync} from 'node:fs'
import path from 'node:path'
import {test} from 'node:test'

import {decode, resetForRedrive} from '../../src/lib/envelope/envelope.js'
import {parseJsonTree, type ObjectNode} from '../../src/lib/envelope/json-tree.js'
import {scanTopLevel} from '../../src/lib/envelope/top-level.js'
import {conformanceDir} from '../support/conformance.js'

const tricky = [
  '{}',
  ' \n{ }\n',
  '{"a":1}',
  '{"job":"x","job":"y","attempts":2,"attempts":12345678901234567890123}',
  '{"\\u006aob":"escaped key","job":"plain","k\\"q":"quote in key"}',
  '{"data":{"s":"}]{[\\"\\\\","n":[1,[2,{"x":"\\\\"}]]},"attempts" : -1.5e+3 , "t":true,"f":false,"z":null}',
  '{\t"meta"\r\n:\t{"id":"a"}\t,"dead_letter":{"reason":"failed"},"dead_letter":{"reason":"poison"}  }',
  '{"__proto__":{"x":1},"attempts":0}',
]

function sameAsTree(text: string): void {
  const tree = parseJsonTree(text) as ObjectNode
  const scan = scanTopLevel(text)
  assert.deepEqual({start: scan.start, end: scan.end}, {start: tree.start, end: tree.end}, text)
  assert.deepEqual(
    scan.members.map((m) => [m.key, m.keyStart, m.value.start, m.value.end]),
    tree.members.map((m) => [m.key, m.keyStart, m.value.start, m.value.end]),
    text,
  )
}

test('the top-level scan finds the members and spans the lossless tree finds', () => {
  for (const text of tricky) sameAsTree(text)
  const fixtures = path.join(conformanceDir, 'fixtures')
  for (const file of readdirSync(fixtures).filter((name) => name.endsWith('.json'))) {
    const text = readFileSync(path.join(fixtures, file), 'utf8')
    let root
    try {
      root = parseJsonTree(text)
    } catch {
      continue
    }
    if (root.kind === 'object') sameAsTree(text)
  }
})

test('values read natively are the tree\'s: last duplicate wins, big integers as Number(source)', () => {
  const envelope = decode('{"job":"x","job":"y","attempts":2,"attempts":12345678901234567890123,"meta":{"id":"a","id":"b"}}')
  assert.equal(envelope.urn, 'y')
  assert.equal(envelope.attempts, Number('12345678901234567890123'))
  assert.equal(envelope.raw('attempts'), '12345678901234567890123')
  assert.equal(envelope.id, 'b')
  // The reset splices every duplicate, keeping the bytes around them.
  assert.equal(resetForRedrive(decode('{"attempts":3, "job":"x" ,"attempts":9,"dead_letter":{}}')).text, '{"attempts":0, "job":"x" ,"attempts":0}')
})
