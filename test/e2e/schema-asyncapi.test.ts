/**
 * `bq schema export-asyncapi` checks its document against the AsyncAPI 3.0.0 JSON Schema before
 * writing it: an invalid one is refused (exit 1) naming the URN, its schema file and the reason,
 * and nothing is written.
 */
import {after, before, describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {registryExamplesDir} from '../support/conformance.js'
import {hasStackTrace, runBq} from '../support/cli.js'

let dir: string
before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-asyncapi-'))
})
after(() => rmSync(dir, {recursive: true, force: true}))

describe('bq schema export-asyncapi validates what it writes', () => {
  test('the examples export (exit 0), and the AsyncAPI parser reads the document without an error', async () => {
    const out = path.join(dir, 'examples.json')
    const result = await runBq(['schema', 'export-asyncapi', '-r', path.join(registryExamplesDir, 'registry.json'), '-o', out])
    assert.equal(result.code, 0, result.stderr)
    const {Parser} = await import('@asyncapi/parser')
    const {document, diagnostics} = await new Parser().parse(readFileSync(out, 'utf8'))
    // Severity 0 is an error; a hint that AsyncAPI 3.1.0 exists is not one.
    assert.deepEqual(diagnostics.filter((d) => d.severity === 0).map((d) => `${d.path.join('/')}: ${d.message}`), [])
    assert.ok(document !== undefined)
    assert.deepEqual(document.channels().all().map((c) => c.address()).sort(), ['urn:babel:orders:created', 'urn:babel:users:registered'])
  })

  test('a schema bq accepts but AsyncAPI does not (deprecated: "yes") is refused, nothing written', async () => {
    const copy = path.join(dir, 'registry')
    cpSync(registryExamplesDir, copy, {recursive: true})
    const file = path.join(copy, 'schemas', 'users-registered.json')
    writeFileSync(file, JSON.stringify({...JSON.parse(readFileSync(file, 'utf8')), deprecated: 'yes'}))
    const out = path.join(dir, 'refused.json')
    const result = await runBq(['schema', 'export-asyncapi', '-r', path.join(copy, 'registry.json'), '-o', out])
    assert.equal(result.code, 1, result.stderr)
    assert.equal(result.stderr.trim().split('\n').length, 1, result.stderr)
    assert.ok(!hasStackTrace(result.stderr), result.stderr)
    assert.match(result.stderr, /urn:babel:users:registered \(.*users-registered\.json\): the document is not valid under the AsyncAPI 3\.0\.0 JSON Schema: \/components\/schemas\/users\.registered\/deprecated must be boolean/)
    assert.equal(existsSync(out), false)
    const json = await runBq(['schema', 'export-asyncapi', '-r', path.join(copy, 'registry.json'), '--json'])
    assert.equal(json.code, 1)
    assert.equal(JSON.parse(json.stdout).error.code, 'invalid-asyncapi')
  })
})
