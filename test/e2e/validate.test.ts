/** `bq validate` end to end through bin/run.js, as a user or a CI job would run it. */
import {after, before, describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, mkdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {conformanceDir, registryExamplesDir} from '../support/conformance.js'
import {hasStackTrace, jsonOutput, jsonResult, runBq} from '../support/cli.js'

const fixtures = path.join(conformanceDir, 'fixtures')
const registry = path.join(registryExamplesDir, 'registry.json')
const good = '{"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","data":{"order_id":1042,"amount":5},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"node","schema_version":1,"created_at":1749132727000},"attempts":0}'
let dir: string

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-validate-'))
})
after(() => rmSync(dir, {recursive: true, force: true}))

function file(name: string, content: string | Buffer): string {
  const target = path.join(dir, name)
  mkdirSync(path.dirname(target), {recursive: true})
  writeFileSync(target, content)
  return target
}

describe('bq validate', () => {
  test('valid fixtures exit 0', async () => {
    const result = await runBq(['validate', path.join(fixtures, 'order-created.json'), path.join(fixtures, 'dead-lettered.json')])
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stdout, /2 messages in 2 inputs: all valid/)
  })

  test('the conformance fixtures directory: invalid ones reported with paths, exit 1', async () => {
    const result = await runBq(['validate', fixtures])
    assert.equal(result.code, 1)
    assert.match(result.stdout, /✗ .*invalid-missing-urn\.json:1/)
    assert.match(result.stdout, /error\s+\$\.job\s+no 'job' or 'urn'/)
    assert.match(result.stdout, /error\s+\$\.meta\.schema_version\s+unsupported schema_version 2/)
    assert.match(result.stdout, /6 messages in 6 inputs: 4 valid, 2 invalid/)
  })

  test('--strict turns warnings into errors', async () => {
    const alias = path.join(fixtures, 'urn-alias.json')
    assert.equal((await runBq(['validate', alias])).code, 0)
    const strict = await runBq(['validate', alias, '--strict'])
    assert.equal(strict.code, 1)
    assert.match(strict.stdout, /error\s+\$\.urn/)
  })

  test('--registry validates data against the URN schema', async () => {
    const ok = await runBq(['validate', path.join(registryExamplesDir, 'messages'), '--registry', registry])
    assert.equal(ok.code, 0, ok.stdout)
    const bad = file('bad-order.json', good.replace('"amount":5', '"amount":-1,"extra":true'))
    const result = await runBq(['validate', bad, '--registry', registry])
    assert.equal(result.code, 1)
    assert.match(result.stdout, /\$\.data\.amount\s+must be >= 0/)
    assert.match(result.stdout, /\$\.data\.extra\s+is not allowed/)
  })

  test('an unregistered URN is reported, and is an error under --strict', async () => {
    const other = file('other.json', good.replace('urn:babel:orders:created', 'urn:babel:billing:paid'))
    const result = await runBq(['validate', other, '--registry', registry])
    assert.equal(result.code, 0)
    assert.match(result.stdout, /warning \$\.job\s+no schema is registered for urn:babel:billing:paid/)
    assert.equal((await runBq(['validate', other, '--registry', registry, '--strict'])).code, 1)
  })

  test('--urn validates bare data objects', async () => {
    const result = await runBq(['validate', '-', '--urn', 'urn:babel:orders:created', '--registry', registry], {stdin: '{"order_id":1,"amount":2}\n{"order_id":0}\n'})
    assert.equal(result.code, 1)
    assert.match(result.stdout, /<stdin>:2/)
    assert.match(result.stdout, /\$\.amount\s+must have required property/)
    assert.match(result.stdout, /\$\.order_id\s+must be >= 1/)
  })

  test('JSONL is reported per line, with line numbers', async () => {
    const jsonl = file('batch.jsonl', [good, '', good.replace('"attempts":0', '"attempts":-1'), '{"job":', good].join('\n'))
    const result = await runBq(['validate', jsonl, '--quiet'])
    assert.equal(result.code, 1)
    assert.match(result.stdout, /batch\.jsonl:3 .*\n.*\$\.attempts/)
    assert.match(result.stdout, /batch\.jsonl:4\n.*not valid JSON/)
    assert.match(result.stdout, /4 messages in 1 input: 2 valid, 2 invalid/)
  })

  test('stdin, globs and directories', async () => {
    const stdin = await runBq(['validate', '-'], {stdin: good})
    assert.equal(stdin.code, 0)
    assert.match(stdin.stdout, /✓ <stdin>:1/)
    file('tree/a/one.json', good)
    file('tree/b/c/two.jsonl', `${good}\n${good}\n`)
    file('tree/ignored.txt', 'not a message')
    const walked = await runBq(['validate', path.join(dir, 'tree')])
    assert.match(walked.stdout, /3 messages in 2 inputs: all valid/)
    const globbed = await runBq(['validate', path.join(dir, 'tree', '**', '*.json')])
    assert.match(globbed.stdout, /1 message in 1 input: all valid/)
    const none = await runBq(['validate', path.join(dir, 'nothing-*.json')])
    assert.equal(none.code, 1)
    assert.match(none.stdout, /no file matches this pattern/)
  })

  test('a missing file is that file\'s error and does not stop the others', async () => {
    const ok = file('fine.json', good)
    const result = await runBq(['validate', path.join(dir, 'missing.json'), ok])
    assert.equal(result.code, 1)
    assert.match(result.stdout, /missing\.json\n.*no such file/)
    assert.match(result.stdout, /✓ .*fine\.json:1/)
  })

  test('bad inputs never crash or print a stack trace', async () => {
    const inputs = [
      file('empty.json', ''),
      file('bom.json', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(good)])),
      file('binary.json', Buffer.from([0x00, 0xff, 0xfe, 0x7b, 0x01, 0x80, 0x0a, 0xc3])),
      file('truncated.json', good.slice(0, 80)),
      file('array.json', `[${good}]`),
      file('deep.json', '{"data":' + '['.repeat(100_000) + ']'.repeat(100_000) + '}'),
      file('proto.json', good.replace('"order_id":1042', '"__proto__":{"admin":true}')),
      file('huge-line.jsonl', `{"job":"urn:babel:a:b","pad":"${'x'.repeat(12 * 1024 * 1024)}"}\n`),
      file('over-limit.jsonl', `{"job":"urn:babel:a:b","pad":"${'x'.repeat(20 * 1024 * 1024)}"}\n${good}\n`),
    ]
    const result = await runBq(['validate', ...inputs])
    assert.equal(result.code, 1)
    assert.ok(!hasStackTrace(result.stdout + result.stderr), result.stderr)
    assert.match(result.stdout, /empty\.json:1\n.*empty input/)
    assert.match(result.stdout, /bom\.json:1 .*\n.*byte order mark/)
    assert.match(result.stdout, /binary\.json:1\n.*not valid UTF-8/)
    assert.match(result.stdout, /truncated\.json:1\n.*not valid JSON/)
    assert.match(result.stdout, /array\.json:1\n.*must be a JSON object, found an array/)
    assert.match(result.stdout, /deep\.json:1\n.*\$\.job/)
    assert.match(result.stdout, /✓ .*proto\.json:1/)
    assert.match(result.stdout, /huge-line\.jsonl:1 .*\n.*\$\.trace_id/)
    assert.match(result.stdout, /over-limit\.jsonl:1\n.*longer than 16 MiB/)
  })

  test('--json has a stable shape', async () => {
    const result = await runBq(['validate', fixtures, '--json'])
    assert.equal(result.code, 1)
    const output = jsonOutput(result.stdout)
    assert.equal(output.ok, false)
    assert.deepEqual(!output.ok && output.error, {code: 'invalid-input', message: '2 of 6 messages invalid', exit_code: 1})
    const body = jsonResult(result.stdout) as {summary: unknown; results: Array<Record<string, unknown> & {source: string}>}
    assert.deepEqual(Object.keys(body), ['summary', 'results'])
    assert.deepEqual(body.summary, {inputs: 6, messages: 6, valid: 4, invalid: 2, errors: 2, warnings: 1})
    assert.deepEqual(Object.keys(body.results[0]).sort(), ['id', 'line', 'problems', 'source', 'urn', 'valid'].filter((k) => k in body.results[0]).sort())
    const missing = body.results.find((r) => r.source.endsWith('invalid-missing-urn.json'))
    assert.deepEqual(missing?.problems, [{severity: 'error', code: 'job.missing', path: '$.job', message: "no 'job' or 'urn': the message has no identity"}])
  })

  test('--format github prints workflow annotations', async () => {
    const result = await runBq(['validate', fixtures, '--format', 'github'])
    assert.equal(result.code, 1)
    assert.match(result.stdout, /^::error file=.*invalid-missing-urn\.json,line=1,title=bq validate job\.missing::\$\.job%3A|^::error file=.*invalid-missing-urn\.json,line=1,title=bq validate job\.missing::\$\.job: no 'job'/m)
    assert.match(result.stdout, /^::warning file=.*urn-alias\.json,line=1/m)
  })

  test('--format junit prints JUnit XML', async () => {
    const result = await runBq(['validate', fixtures, '--format', 'junit'])
    assert.equal(result.code, 1)
    assert.match(result.stdout, /^<\?xml version="1\.0"/)
    assert.match(result.stdout, /<testsuites name="bq validate" tests="6" failures="2">/)
    assert.match(result.stdout, /<failure message="unsupported schema_version 2/)
  })

  test('--format jsonl streams one result per message', async () => {
    const result = await runBq(['validate', fixtures, '--format', 'jsonl'])
    const lines = result.stdout.trim().split('\n').map((l) => JSON.parse(l))
    assert.equal(lines.length, 7)
    assert.deepEqual(lines[6], {summary: {inputs: 6, messages: 6, valid: 4, invalid: 2, errors: 2, warnings: 1}})
  })

  test('usage errors exit 2 with one line', async () => {
    for (const args of [['validate'], ['validate', 'x.json', '--format', 'yaml'], ['validate', 'x.json', '--urn', 'urn:babel:a:b'], ['validate', 'x.json', '--registry', path.join(dir, 'nope.json')], ['validate', '--bogus']]) {
      const result = await runBq(args)
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`)
      assert.ok(!hasStackTrace(result.stderr), result.stderr)
    }
  })

  test('a broken registry is a usage error', async () => {
    const broken = file('reg/registry.json', '{"schemas":[{"urn":"urn:babel:a:b","schema":"s.json"}]}')
    file('reg/s.json', '{"type":"object","properties":{"a":{"type":"nonsense"}}}')
    const result = await runBq(['validate', path.join(fixtures, 'order-created.json'), '--registry', broken])
    assert.equal(result.code, 2)
    assert.match(result.stderr, /not a valid JSON Schema/)
  })
})
