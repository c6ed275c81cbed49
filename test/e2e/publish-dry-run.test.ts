/**
 * `bq publish --dry-run` prints exactly the bytes a real publish sends: both come from one code
 * path (ops/publish.ts buildMessages), so big integers, `99.90`, unicode and nested data survive
 * in the dry run as they do on the broker. Checked through bin/run.js against the embedded
 * broker, comparing the dry run's output with `bq peek --raw` of a real publish. `meta.id` and
 * `meta.created_at` differ per message by design and are masked; every other byte must match.
 */
import {after, before, describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {jsonOutput, runBq} from '../support/cli.js'

const urn = 'urn:babel:orders:created'
const trace = '7b3f9c2a-e41d-4f88-9b2a-000000000001'
let dir: string
let url: string
let env: NodeJS.ProcessEnv
let queues = 0

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-dry-run-'))
  url = `sqlite://${path.join(dir, 'q.db')}`
  env = {XDG_DATA_HOME: dir, BQ_BROKER: ''}
})
after(() => rmSync(dir, {recursive: true, force: true}))

/** The per-message values a dry run cannot predict, replaced in the text (never re-serialised). */
function masked(line: string): string {
  return line.replace(/"meta":\{"id":"[0-9a-f-]{36}"/, '"meta":{"id":"<id>"').replace(/"created_at":\d+\}/, '"created_at":<ms>}')
}

function lines(stdout: string): string[] {
  assert.ok(stdout.endsWith('\n'), JSON.stringify(stdout))
  return stdout.slice(0, -1).split('\n')
}

/** The dry run's lines and the bodies a real publish of the same data stored, both masked. */
async function dryAndReal(data: string, extra: string[] = []): Promise<{dry: string[]; stored: string[]}> {
  const queue = `dry-${++queues}`
  const args = ['publish', urn, '--data', data, '-q', queue, '--trace-id', trace, ...extra]
  const dry = await runBq([...args, '--dry-run'], {env})
  assert.equal(dry.code, 0, dry.stderr)
  const real = await runBq([...args, '-b', url], {env})
  assert.equal(real.code, 0, real.stderr)
  const peek = await runBq(['peek', queue, '--raw', '--all', '-b', url], {env})
  assert.equal(peek.code, 0, peek.stderr)
  return {dry: lines(dry.stdout).map(masked), stored: lines(peek.stdout).map(masked)}
}

describe('publish --dry-run prints the bytes a real publish sends', () => {
  const cases: Array<[string, string]> = [
    ['big integers and trailing zeros', '{"n":9007199254740993,"p":99.90}'],
    ['exponents and negative zero', '{"e":1E+2,"z":-0,"f":1.50e-3}'],
    ['unicode, escapes and slashes', '{"name":"José 東京 😀","esc":"\\u00e9\\n\\"q\\"","url":"a/b"}'],
    ['nested data and insignificant whitespace', '{ "order": { "lines": [ {"sku": "A-1", "qty": 2, "price": 10.00}, [] ], "meta": {} } }'],
  ]
  for (const [name, data] of cases) {
    test(name, async () => {
      const {dry, stored} = await dryAndReal(data)
      assert.equal(dry.length, 1)
      assert.deepEqual(dry, stored)
    })
  }

  test('the dry run keeps the exact tokens (it used to show 9007199254740992 and 99.9)', async () => {
    const dry = await runBq(['publish', urn, '--data', '{"n":9007199254740993,"p":99.90}', '--dry-run'], {env})
    assert.equal(dry.code, 0, dry.stderr)
    assert.match(dry.stdout, /"data":\{"n":9007199254740993,"p":99\.90\}/)
  })

  test('--count: one line per message, each as stored', async () => {
    const {dry, stored} = await dryAndReal('{"n":9007199254740993,"p":99.90,"s":"ü"}', ['--count', '3'])
    assert.equal(dry.length, 3)
    assert.deepEqual(dry, stored)
  })

  test('--json: result.bodies holds the exact text, the other fields stay', async () => {
    const data = '{"n":9007199254740993,"p":99.90,"name":"José"}'
    const text = await runBq(['publish', urn, '--data', data, '--trace-id', trace, '--count', '2', '--dry-run'], {env})
    const run = await runBq(['publish', urn, '--data', data, '--trace-id', trace, '--count', '2', '--dry-run', '--json'], {env})
    assert.equal(run.code, 0, run.stderr)
    const output = jsonOutput(run.stdout)
    assert.ok(output.ok, run.stdout)
    const result = output.result as {dry_run: boolean; ids: string[]; trace_ids: string[]; bodies: string[]; envelopes: Array<{meta: {id: string}}>}
    assert.equal(result.dry_run, true)
    assert.equal(result.bodies.length, 2)
    assert.deepEqual(result.bodies.map(masked), lines(text.stdout).map(masked))
    assert.ok(result.bodies.every((body) => body.includes('"data":{"n":9007199254740993,"p":99.90,"name":"José"}')), result.bodies.join('\n'))
    assert.deepEqual(result.envelopes.map((e) => e.meta.id), result.ids)
    assert.deepEqual(result.trace_ids, [trace, trace])
  })
})
