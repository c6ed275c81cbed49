/**
 * `bq schema` end to end through bin/run.js, as a CI job or a pre-commit hook runs it: on the
 * shared registry examples, and on broken copies of them in a temp dir (a temp git repository
 * for --against). Files only: no broker.
 */
import {after, before, describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {execFileSync} from 'node:child_process'
import {cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {createRequire} from 'node:module'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {registryExamplesDir, repoRoot} from '../support/conformance.js'
import {hasStackTrace, jsonOutput, jsonResult, runBq} from '../support/cli.js'

const registry = path.join(registryExamplesDir, 'registry.json')
const schemas = path.join(registryExamplesDir, 'schemas')
const v1 = path.join(schemas, 'orders-created.json')
const v2 = path.join(schemas, 'orders-created.v2-breaking.json')
let dir: string

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-schema-'))
})
after(() => rmSync(dir, {recursive: true, force: true}))

/** A copy of the registry examples to break, in its own folder. */
function copyRegistry(name: string): string {
  const target = path.join(dir, name)
  cpSync(registryExamplesDir, target, {recursive: true})
  return target
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- test fixtures are edited freely
function editJson(file: string, edit: (value: Record<string, any>) => void): void {
  const value = JSON.parse(readFileSync(file, 'utf8'))
  edit(value)
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`)
}

function write(name: string, content: unknown): string {
  const file = path.join(dir, name)
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2))
  return file
}

const git = (cwd: string, ...args: string[]) => execFileSync('git', ['-c', 'user.name=bq tests', '-c', 'user.email=tests@bq.invalid', '-c', 'commit.gpgsign=false', ...args], {cwd, stdio: 'pipe'})

/** The 1-based line of the first line of `file` that contains `needle`. */
function lineWith(file: string, needle: string): number {
  return readFileSync(file, 'utf8').split('\n').findIndex((line) => line.includes(needle)) + 1
}

function envelopeLine(data: unknown, urn = 'urn:babel:orders:created'): string {
  return JSON.stringify({job: urn, trace_id: '7b3f9c2a-e41d-4a1b-9c2a-000000000000', data, meta: {id: 'f1e2d3c4-b5a6-4789-90ab-cdef01234567', queue: 'orders', lang: 'go', schema_version: 1, created_at: 1749132727000}, attempts: 0})
}

describe('bq schema compat', () => {
  test('v1 → v2 of the examples: a newly required field is breaking (exit 1), in text, JSON, GitHub and JUnit form', async () => {
    const [text, json, github, junit] = await Promise.all([
      runBq(['schema', 'compat', v1, v2]),
      runBq(['schema', 'compat', v1, v2, '--json']),
      runBq(['schema', 'compat', v1, v2, '--format', 'github']),
      runBq(['schema', 'compat', v1, v2, '--format', 'junit']),
    ])
    assert.equal(text.code, 1, text.stderr)
    assert.match(text.stdout, /breaking\s+\$\.customer_id\s+"customer_id" is now required.*\[required\.added\]/)
    assert.match(text.stdout, /^BREAKING \(1 breaking, 0 unproven/m)
    assert.equal(json.code, 1)
    const output = jsonOutput(json.stdout)
    assert.equal(output.ok, false)
    const result = jsonResult(json.stdout) as {verdict: string; findings: Array<Record<string, unknown>>}
    assert.equal(result.verdict, 'breaking')
    assert.deepEqual(result.findings.map((f) => [f.rule, f.path, f.schema_path, f.line]), [['required.added', '$.customer_id', '/required/2', 4]])
    assert.equal(github.code, 1)
    assert.match(github.stdout, /^::error file=[^,]*orders-created\.v2-breaking\.json,line=4,title=bq schema compat required\.added::/m)
    assert.equal(junit.code, 1)
    assert.match(junit.stdout, /<testsuites name="bq schema compat" tests="1" failures="1">/)
    assert.match(junit.stdout, /<failure message="&quot;customer_id&quot; is now required[^"]*" type="required.added">/)
  })

  test('v2 → v1: the removed property of a closed object is breaking; the same schema twice is compatible (exit 0)', async () => {
    const [back, same] = await Promise.all([runBq(['schema', 'compat', v2, v1, '--json']), runBq(['schema', 'compat', v1, v1])])
    assert.equal(back.code, 1)
    const findings = (jsonResult(back.stdout) as {findings: Array<{rule: string; path: string}>}).findings
    assert.deepEqual(findings.map((f) => [f.rule, f.path]), [['property.removed', '$.customer_id']])
    assert.equal(same.code, 0, same.stderr)
    assert.match(same.stdout, /^compatible \(0 breaking, 0 unproven, 0 warnings\)/m)
  })

  test('a change that cannot be judged statically exits 7 (unproven); --strict makes it exit 1', async () => {
    const oldFile = write('pattern-old.json', {type: 'object', properties: {sku: {type: 'string', pattern: '^[A-Z]+$'}}})
    const newFile = write('pattern-new.json', {type: 'object', properties: {sku: {type: 'string', pattern: '^[A-Z0-9]+$'}}})
    const [plain, strict, github] = await Promise.all([
      runBq(['schema', 'compat', oldFile, newFile, '--json']),
      runBq(['schema', 'compat', oldFile, newFile, '--strict']),
      runBq(['schema', 'compat', oldFile, newFile, '--format', 'github']),
    ])
    assert.equal(plain.code, 7, plain.stdout)
    const output = jsonOutput(plain.stdout)
    assert.equal(output.ok === false && output.error.code, 'unproven')
    assert.equal((jsonResult(plain.stdout) as {findings: Array<{rule: string}>}).findings[0].rule, 'pattern.changed')
    assert.equal(strict.code, 1)
    assert.match(github.stdout, new RegExp(`^::warning file=[^,]*pattern-new\\.json,line=${lineWith(newFile, '"pattern"')},title=bq schema compat pattern\\.changed::`, 'm'))
  })

  test('--sample: envelopes OLD accepted and NEW rejects are counted, with examples (stdin too)', async () => {
    const sample = [envelopeLine({order_id: 1, amount: 5}), envelopeLine({order_id: 2, amount: 5, customer_id: 'c'}), envelopeLine({order_id: 0, amount: 5}), envelopeLine({user_id: 1, email: 'a@b.c'}, 'urn:babel:users:registered')].join('\n')
    const file = write('sample.jsonl', `${sample}\n`)
    const [fromFile, fromStdin] = await Promise.all([
      runBq(['schema', 'compat', v1, v2, '--sample', file, '--urn', 'urn:babel:orders:created', '--json']),
      runBq(['schema', 'compat', v1, v2, '--sample', '-', '--urn', 'urn:babel:orders:created'], {stdin: sample}),
    ])
    assert.equal(fromFile.code, 1)
    const result = jsonResult(fromFile.stdout) as {sample: Record<string, unknown> & {examples: Array<{line: number}>}}
    assert.equal(result.sample.messages, 4)
    assert.equal(result.sample.checked, 3)
    // Line 2 carries a field closed v1 does not allow, line 3 an order_id below v1's minimum.
    assert.equal(result.sample.old_accepted, 1)
    assert.equal(result.sample.new_rejected, 2)
    assert.equal(result.sample.regressions, 1)
    assert.deepEqual(result.sample.examples.map((e) => e.line), [1])
    assert.match(fromStdin.stdout, /sample <stdin>\s+3 checked, 2 rejected by NEW, 1 of them accepted by OLD/)
  })

  test('--registry --against REF: each URN against its schema at a git ref, with the URN to mint', async () => {
    const repo = copyRegistry('git-registry')
    git(repo, 'init', '-q')
    git(repo, 'add', '-A')
    git(repo, 'commit', '-q', '-m', 'registry')
    // At HEAD: orders narrows its currency enum, users gains an optional annotated field in a closed object.
    const compatible = await runBq(['schema', 'compat', '--registry', path.join(repo, 'registry.json'), '--against', 'HEAD'])
    assert.equal(compatible.code, 0, compatible.stdout + compatible.stderr)
    assert.match(compatible.stdout, /✓ urn:babel:orders:created\s+unchanged/)
    editJson(path.join(repo, 'schemas', 'users-registered.json'), (s) => {
      s.properties.nickname = {type: 'string', 'x-gdpr-sensitive': true}
    })
    const additive = await runBq(['schema', 'compat', '-r', path.join(repo, 'registry.json'), '--against', 'HEAD', '--json'])
    assert.equal(additive.code, 0, additive.stdout)
    assert.equal((jsonResult(additive.stdout) as {verdict: string}).verdict, 'compatible')
    editJson(path.join(repo, 'schemas', 'orders-created.json'), (s) => {
      s.properties.currency.enum = ['USD', 'EUR']
    })
    editJson(path.join(repo, 'registry.json'), (r) => {
      r.schemas = [r.schemas[0], {urn: 'urn:babel:orders:shipped', schema: 'schemas/orders-created.v2-breaking.json'}]
    })
    const sample = write('registry-sample.jsonl', `${envelopeLine({order_id: 1, amount: 5, currency: 'TRY'})}\n${envelopeLine({order_id: 2, amount: 5, currency: 'EUR'})}\n`)
    const [json, github, sampled] = await Promise.all([
      runBq(['schema', 'compat', '-r', path.join(repo, 'registry.json'), '--against', 'HEAD', '--json']),
      runBq(['schema', 'compat', '-r', path.join(repo, 'registry.json'), '--against', 'HEAD', '--format', 'github']),
      runBq(['schema', 'compat', '-r', path.join(repo, 'registry.json'), '--against', 'HEAD', '--sample', sample, '--quiet']),
    ])
    assert.equal(sampled.code, 1)
    assert.match(sampled.stdout, /sample .*registry-sample\.jsonl\s+2 checked, 1 rejected by NEW, 1 of them accepted by OLD/)
    assert.match(sampled.stdout, /rejected urn:babel:orders:created .*\$\.data\.currency must be one of "USD", "EUR"/)
    assert.doesNotMatch(sampled.stdout, /urn:babel:orders:shipped/, '--quiet leaves out the URNs without findings')
    assert.equal(json.code, 1)
    const result = jsonResult(json.stdout) as {urns: Array<{urn: string; status: string; suggested_urn?: string; findings: Array<{rule: string; line?: number}>}>}
    const byUrn = Object.fromEntries(result.urns.map((u) => [u.urn, u]))
    assert.equal(byUrn['urn:babel:orders:created'].status, 'changed')
    assert.equal(byUrn['urn:babel:orders:created'].suggested_urn, 'urn:babel:orders:created.v2')
    assert.deepEqual(byUrn['urn:babel:orders:created'].findings.map((f) => f.rule), ['enum.narrowed'])
    assert.equal(byUrn['urn:babel:orders:shipped'].status, 'added')
    assert.equal(byUrn['urn:babel:users:registered'].status, 'removed')
    const enumLine = lineWith(path.join(repo, 'schemas', 'orders-created.json'), '"enum"')
    assert.match(github.stdout, new RegExp(`^::error file=[^,]*orders-created\\.json,line=${enumLine},title=bq schema compat enum\\.narrowed::urn:babel:orders:created \\$\\.currency: "TRY" was valid`, 'm'))
    assert.match(github.stdout, /urn\.mint.*urn:babel:orders:created\.v2/)
    assert.match(github.stdout, /urn\.removed/)
    const badRef = await runBq(['schema', 'compat', '-r', path.join(repo, 'registry.json'), '--against', 'no-such-ref'])
    assert.equal(badRef.code, 2)
    assert.match(badRef.stderr, /^Error: --against no-such-ref: not a commit/)
  })

  test('bad input: one line, exit 2, never a stack trace', async () => {
    const notJson = write('not-json.json', '{"type": ')
    const cycle = write('cycle.json', {definitions: {a: {$ref: '#/definitions/b'}, b: {$ref: '#/definitions/a'}}, properties: {x: {$ref: '#/definitions/a'}}})
    const results = await Promise.all([
      runBq(['schema', 'compat', v1, path.join(dir, 'missing.json')]),
      runBq(['schema', 'compat', notJson, v1]),
      runBq(['schema', 'compat', cycle, v1]),
      runBq(['schema', 'compat', v1]),
      runBq(['schema', 'compat', '--registry', registry]),
    ])
    const expected = [/cannot read new schema .*missing\.json: no such file/, /old schema .*not-json\.json is not valid JSON/, /old schema: \$ref #\/definitions\/b is a reference cycle/, /give OLD\.json and NEW\.json/, /--registry needs --against/]
    results.forEach((r, i) => {
      assert.equal(r.code, 2, r.stderr)
      assert.match(r.stderr, expected[i])
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr)
      assert.ok(!hasStackTrace(r.stderr + r.stdout))
    })
  })
})

describe('bq schema check', () => {
  test('the examples are sound (exit 0)', async () => {
    const result = await runBq(['schema', 'check', '--registry', registry])
    assert.equal(result.code, 0, result.stdout)
    assert.match(result.stdout, /2 schemas in .*registry\.json: all sound/)
  })

  test('a broken copy: every bad entry named with its file and line (exit 1)', async () => {
    const broken = copyRegistry('broken-check')
    writeFileSync(path.join(broken, 'schemas', 'not-json.json'), '{\n  "type": "object",\n  oops\n}\n')
    writeFileSync(path.join(broken, 'schemas', 'cycle.json'), JSON.stringify({definitions: {a: {$ref: '#/definitions/b'}, b: {$ref: '#/definitions/a'}}, properties: {x: {$ref: '#/definitions/a'}}}, null, 2))
    writeFileSync(path.join(broken, 'schemas', 'dangling.json'), JSON.stringify({properties: {x: {$ref: '#/definitions/nothing'}}}, null, 2))
    writeFileSync(path.join(broken, 'schemas', 'invalid.json'), JSON.stringify({type: 'object', properties: {x: {type: 'strin'}}}, null, 2))
    editJson(path.join(broken, 'registry.json'), (r) => {
      r.schemas.push(
        {urn: 'urn:babel:orders:gone', schema: 'schemas/missing.json'},
        {urn: 'urn:babel:orders:broken', schema: 'schemas/not-json.json'},
        {urn: 'orders-created', schema: 'schemas/orders-created.json'},
        {urn: 'urn:babel:orders:created', schema: 'schemas/orders-created.json'},
        {urn: 'urn:babel:orders:cycle', schema: 'schemas/cycle.json'},
        {urn: 'urn:babel:orders:dangling', schema: 'schemas/dangling.json'},
        {urn: 'urn:babel:orders:outside', schema: '../../etc/passwd'},
        {urn: 'urn:babel:orders:invalid', schema: 'schemas/invalid.json'},
      )
    })
    const [text, github, json] = await Promise.all([
      runBq(['schema', 'check', '-r', path.join(broken, 'registry.json')]),
      runBq(['schema', 'check', '-r', path.join(broken, 'registry.json'), '--format', 'github']),
      runBq(['schema', 'check', '-r', path.join(broken, 'registry.json'), '--json']),
    ])
    assert.equal(text.code, 1)
    for (const rule of ['schema.missing', 'schema.not_json', 'urn.syntax', 'urn.duplicate', 'ref.cycle', 'ref.unresolved', 'schema.outside', 'schema.invalid']) assert.match(text.stdout, new RegExp(`\\[${rule.replace('.', '\\.')}\\]`), rule)
    assert.match(text.stdout, /10 schemas in .*: 8 broken/)
    assert.match(github.stdout, /^::error file=[^,]*not-json\.json,line=3,title=bq schema check schema\.not_json::/m)
    assert.match(github.stdout, /^::error file=[^,]*cycle\.json,line=\d+,title=bq schema check ref\.cycle::/m)
    assert.match(github.stdout, /^::error file=[^,]*registry\.json,line=\d+,title=bq schema check urn\.duplicate::/m)
    assert.equal(json.code, 1)
    const result = jsonResult(json.stdout) as {errors: number; entries: Array<{urn: string; issues: Array<{severity: string}>}>}
    assert.equal(result.entries.filter((e) => e.issues.some((i) => i.severity === 'error')).length, 8)
    assert.ok(result.errors >= 8)
    assert.ok(!hasStackTrace(text.stdout + text.stderr))
  })

  test('a registry.json that is not one is a usage error (exit 2)', async () => {
    const result = await runBq(['schema', 'check', '-r', write('not-registry.json', {entries: []})])
    assert.equal(result.code, 2)
    assert.match(result.stderr, /^Error: .*not a babelqueue registry/)
  })
})

describe('bq schema export-asyncapi', () => {
  test('an AsyncAPI 3.0.0 document valid against the AsyncAPI JSON Schema, one channel and message per URN', async () => {
    const file = path.join(dir, 'asyncapi.json')
    const result = await runBq(['schema', 'export-asyncapi', '--registry', registry, '-o', file])
    assert.equal(result.code, 0, result.stderr)
    assert.match(result.stderr, /wrote .*asyncapi\.json: AsyncAPI 3\.0\.0, 2 channels/)
    const document = JSON.parse(readFileSync(file, 'utf8'))
    const require = createRequire(path.join(repoRoot, 'package.json'))
    const {Ajv} = require('ajv') as typeof import('ajv')
    const addFormats = require('ajv-formats') as {default?: (ajv: unknown) => void} & ((ajv: unknown) => void)
    const ajv = new Ajv({strict: false, allErrors: true})
    ;(addFormats.default ?? addFormats)(ajv)
    // A plain boolean check: ajv's type guard would narrow the parsed documents to unknown.
    const asyncApiSchema = ajv.compile(require('@asyncapi/specs/schemas/3.0.0-without-$id.json'))
    const validate = Object.assign((data: unknown): boolean => asyncApiSchema(data), {get errors() { return asyncApiSchema.errors }})
    assert.ok(validate(document), JSON.stringify(validate.errors?.slice(0, 5)))
    // The validator does reject a broken document (the check above is not vacuous).
    assert.equal(validate({...document, channels: {'urn:bad key': {address: 1}}}), false)
    assert.deepEqual(Object.keys(document.channels), ['orders.created', 'users.registered'])
    assert.equal(document.channels['users.registered'].address, 'urn:babel:users:registered')
    const message = document.components.messages['users.registered']
    assert.equal(message.name, 'urn:babel:users:registered')
    assert.deepEqual(message.payload.required, ['job', 'trace_id', 'data', 'meta', 'attempts'])
    assert.deepEqual(message.payload.properties.data, {$ref: '#/components/schemas/users.registered'})
    assert.equal(document.components.schemas['users.registered'].properties.email['x-gdpr-sensitive'], 'email')
    // A schema with definitions: its local $refs are rewritten to point into components.schemas.
    const withRefs = copyRegistry('asyncapi-refs')
    editJson(path.join(withRefs, 'schemas', 'orders-created.json'), (s) => {
      s.definitions = {money: {type: 'number', minimum: 0}}
      s.properties.amount = {$ref: '#/definitions/money'}
    })
    const refsFile = path.join(dir, 'asyncapi-refs.json')
    const refs = await runBq(['schema', 'export-asyncapi', '-r', path.join(withRefs, 'registry.json'), '-o', refsFile])
    assert.equal(refs.code, 0, refs.stderr)
    const refsDocument = JSON.parse(readFileSync(refsFile, 'utf8'))
    assert.ok(validate(refsDocument), JSON.stringify(validate.errors?.slice(0, 5)))
    assert.deepEqual(refsDocument.components.schemas['orders.created'].properties.amount, {$ref: '#/components/schemas/orders.created/definitions/money'})
    assert.equal(refsDocument.components.schemas['orders.created'].$schema, undefined)
    const [junit, github, noFile] = await Promise.all([
      runBq(['schema', 'export-asyncapi', '-r', registry, '-o', path.join(dir, 'asyncapi-2.json'), '--format', 'junit']),
      runBq(['schema', 'export-asyncapi', '-r', registry, '-o', path.join(dir, 'asyncapi-3.json'), '--format', 'github']),
      runBq(['schema', 'export-asyncapi', '-r', registry, '--format', 'junit']),
    ])
    assert.equal(junit.code, 0)
    assert.match(junit.stdout, /<testsuites name="bq schema export-asyncapi" tests="2" failures="0">/)
    assert.match(github.stdout, /^::notice file=[^,]*registry\.json,title=bq schema export-asyncapi::wrote .*asyncapi-3\.json: AsyncAPI 3\.0\.0, 2 channels$/m)
    assert.equal(noFile.code, 2)
  })

  test('stdout by default; an entry outside the registry folder, or a $ref cycle, is a usage error (exit 2)', async () => {
    const outside = copyRegistry('outside')
    editJson(path.join(outside, 'registry.json'), (r) => {
      r.schemas.push({urn: 'urn:babel:x:y', schema: '../registry-examples-elsewhere.json'})
    })
    const cyclic = copyRegistry('cyclic')
    editJson(path.join(cyclic, 'schemas', 'orders-created.json'), (s) => {
      s.definitions = {a: {$ref: '#/definitions/b'}, b: {$ref: '#/definitions/a'}}
      s.properties.amount = {$ref: '#/definitions/a'}
    })
    const [stdout, refused, cycle] = await Promise.all([
      runBq(['schema', 'export-asyncapi', '-r', registry]),
      runBq(['schema', 'export-asyncapi', '-r', path.join(outside, 'registry.json')]),
      runBq(['schema', 'gdpr', '-r', path.join(cyclic, 'registry.json')]),
    ])
    assert.equal(stdout.code, 0)
    assert.equal(JSON.parse(stdout.stdout).asyncapi, '3.0.0')
    assert.equal(refused.code, 2)
    assert.match(refused.stderr, /^Error: .*urn:babel:x:y\) points outside the registry's folder/)
    assert.equal(cycle.code, 2)
    assert.match(cycle.stderr, /^Error: urn:babel:orders:created \(.*orders-created\.json\): \$ref #\/definitions\/. is a reference cycle/)
    assert.ok(!hasStackTrace(refused.stderr + cycle.stderr))
  })
})

describe('bq schema gdpr', () => {
  test('the inventory of x-gdpr-sensitive paths per URN; --require passes on the examples', async () => {
    const [inventory, required] = await Promise.all([runBq(['schema', 'gdpr', '-r', registry, '--json']), runBq(['schema', 'gdpr', '-r', registry, '--require'])])
    assert.equal(inventory.code, 0)
    const urns = (jsonResult(inventory.stdout) as {urns: Array<{urn: string; sensitive: Array<{field: string; category: string}>}>}).urns
    assert.deepEqual(urns.find((u) => u.urn === 'urn:babel:users:registered')?.sensitive, [
      {field: 'data.email', category: 'email'},
      {field: 'data.phone', category: 'personal'},
      {field: 'data.profile.full_name', category: 'personal'},
      {field: 'data.profile.tckn', category: 'national_id'},
      {field: 'data.addresses[*].line', category: 'personal'},
    ])
    assert.deepEqual(urns.find((u) => u.urn === 'urn:babel:orders:created')?.sensitive, [])
    assert.equal(required.code, 0, required.stdout)
  })

  test('--require fails on un-annotated personal data (and on names the registry adds), with the line', async () => {
    const copy = copyRegistry('gdpr')
    editJson(path.join(copy, 'schemas', 'users-registered.json'), (s) => {
      delete s.properties.email['x-gdpr-sensitive']
      s.properties.billingAddress = {type: 'string'}
      s.properties.queue_name = {type: 'string'}
      s.properties.ip = {type: 'string', 'x-gdpr-sensitive': false}
    })
    editJson(path.join(copy, 'registry.json'), (r) => {
      r.gdpr = {personal_data_names: ['locale']}
    })
    const [github, json] = await Promise.all([
      runBq(['schema', 'gdpr', '-r', path.join(copy, 'registry.json'), '--require', '--format', 'github']),
      runBq(['schema', 'gdpr', '-r', path.join(copy, 'registry.json'), '--require', '--json']),
    ])
    assert.equal(github.code, 1)
    const emailLine = lineWith(path.join(copy, 'schemas', 'users-registered.json'), '"email": {')
    assert.match(github.stdout, new RegExp(`^::error file=[^,]*users-registered\\.json,line=${emailLine},title=bq schema gdpr gdpr\\.unannotated::urn:babel:users:registered data\\.email: looks like personal data`, 'm'))
    const urns = (jsonResult(json.stdout) as {urns: Array<{urn: string; unannotated?: Array<{field: string}>}>}).urns
    assert.deepEqual(urns.find((u) => u.urn === 'urn:babel:users:registered')?.unannotated?.map((f) => f.field).sort(), ['data.billingAddress', 'data.email', 'data.locale'])
  })

  test('--mask prints the message with its sensitive values masked, as peek masks them', async () => {
    const result = await runBq(['schema', 'gdpr', '-r', registry, '--mask', path.join(registryExamplesDir, 'messages', 'user-registered.json')])
    assert.equal(result.code, 0, result.stderr)
    const masked = JSON.parse(result.stdout)
    assert.equal(masked.data.email, '[masked:email]')
    assert.equal(masked.data.profile.tckn, '[masked:national_id]')
    assert.equal(masked.data.addresses[0].line, '[masked:personal]')
    assert.equal(masked.data.addresses[0].country, 'TR')
    assert.equal(masked.data.user_id, 7781)
    const missing = await runBq(['schema', 'gdpr', '-r', registry, '--mask', path.join(dir, 'nope.json')])
    assert.equal(missing.code, 2)
    assert.match(missing.stderr, /^Error: cannot read --mask .*nope\.json: no such file/)
  })
})
