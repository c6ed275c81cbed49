/** The JSONL splitter: line numbers, CRLF, blank lines, chunk boundaries (also inside a UTF-8 character), invalid bytes. */
import {test} from 'node:test'
import assert from 'node:assert/strict'
import {Readable} from 'node:stream'

import {readMessages, type MessageText} from '../../src/lib/ops/read-messages.js'

async function read(chunks: Buffer[]): Promise<MessageText[]> {
  const out: MessageText[] = []
  await readMessages('-', (message) => out.push(message), {stdin: Readable.from(chunks)})
  return out
}

/** Cuts `bytes` into chunks at every given offset. */
function cut(bytes: Buffer, ...offsets: number[]): Buffer[] {
  const chunks: Buffer[] = []
  let start = 0
  for (const offset of offsets) {
    chunks.push(bytes.subarray(start, offset))
    start = offset
  }
  chunks.push(bytes.subarray(start))
  return chunks
}

const lines = ['{"a":1}', '{"b":"é€😀"}', '', '{"c":3}\r', '   ', '{"d":"x"}']
const input = Buffer.from(lines.join('\n') + '\n')
const expected = [
  {line: 1, text: '{"a":1}'},
  {line: 2, text: '{"b":"é€😀"}'},
  {line: 4, text: '{"c":3}'},
  {line: 6, text: '{"d":"x"}'},
]

test('every way of cutting the input into chunks gives the same messages', async () => {
  for (let first = 1; first < input.length; first++) {
    for (const second of [first + 1, first + 3, first + 7]) {
      if (second >= input.length) continue
      const got = (await read(cut(input, first, second))).map(({line, text}) => ({line, text}))
      assert.deepEqual(got, expected, `cut at ${first} and ${second}`)
    }
  }
})

test('a last line without a newline is read', async () => {
  const got = await read([Buffer.from('{"a":1}\n{"b":2}')])
  assert.deepEqual(got.map(({line, text}) => ({line, text})), [{line: 1, text: '{"a":1}'}, {line: 2, text: '{"b":2}'}])
})

test('invalid UTF-8 is reported on its own line; the lines around it are read', async () => {
  const bytes = Buffer.concat([Buffer.from('{"a":1}\n{"b":2}\n{"bad":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}\n{"c":3}\n')])
  for (const chunks of [[bytes], cut(bytes, 10), cut(bytes, 20, 30)]) {
    const got = await read(chunks)
    assert.deepEqual(
      got.map((m) => [m.line, m.text ?? m.readError?.code]),
      [[1, '{"a":1}'], [2, '{"b":2}'], [3, 'encoding.not_utf8'], [4, '{"c":3}']],
    )
  }
})

test('a chunk of many lines (decoded in pieces) keeps every line, its number, CRLF and an invalid line', async () => {
  // 5,000 lines of ~120 bytes: one 600 KB chunk, decoded in several 64 KiB pieces.
  const texts = Array.from({length: 5000}, (_, i) => `{"n":${i},"pad":"${'é'.repeat(i % 50)}${'x'.repeat(60)}"}`)
  const parts = texts.map((text, i) => Buffer.from(text + (i % 7 === 0 ? '\r\n' : '\n')))
  parts[3001] = Buffer.concat([Buffer.from('{"bad":"'), Buffer.from([0xc3]), Buffer.from('"}\n')])
  const bytes = Buffer.concat(parts)
  for (const chunks of [[bytes], cut(bytes, 70_000, 70_001, 300_000)]) {
    const got = await read(chunks)
    assert.equal(got.length, 5000)
    got.forEach((message, i) => {
      assert.equal(message.line, i + 1)
      if (i === 3001) assert.equal(message.readError?.code, 'encoding.not_utf8')
      else assert.equal(message.text, texts[i])
    })
  }
})

test('a UTF-8 byte order mark is stripped and flagged on the first message', async () => {
  const got = await read([Buffer.from('\uFEFF{"a":1}\n{"b":2}\n')])
  assert.deepEqual(got.map((m) => [m.line, m.text, m.bom ?? false]), [[1, '{"a":1}', true], [2, '{"b":2}', false]])
})

test('a pretty-printed document is one message', async () => {
  const got = await read(cut(Buffer.from('{\n  "a": 1,\n  "b": [1, 2]\n}\n'), 5, 12))
  assert.equal(got.length, 1)
  assert.deepEqual(JSON.parse(got[0].text as string), {a: 1, b: [1, 2]})
})
