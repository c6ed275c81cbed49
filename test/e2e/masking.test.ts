/** PII masking end to end on the embedded store: peek masks what the registry marks, replay refuses a masked export, --unmask shows. */
import {after, before, test} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {registryExamplesDir} from '../support/conformance.js'
import {hasStackTrace, jsonOutput, jsonResult, runBq} from '../support/cli.js'

const registry = path.join(registryExamplesDir, 'registry.json')
const user = JSON.stringify(JSON.parse(readFileSync(path.join(registryExamplesDir, 'messages', 'user-registered.json'), 'utf8')))
let dir: string
let broker: string

before(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-mask-'))
  broker = `sqlite://${path.join(dir, 'queues.db')}`
  writeFileSync(path.join(dir, 'user.jsonl'), `${user}\n`)
  const seeded = await runBq(['replay', path.join(dir, 'user.jsonl'), '--as-is', '--to', 'users', '--yes', '-b', broker])
  assert.equal(seeded.code, 0, seeded.stderr)
})
after(() => rmSync(dir, {recursive: true, force: true}))

test('peek --registry masks x-gdpr-sensitive fields in --json and --jsonl; the rest of the envelope is as stored', async () => {
  const peek = jsonResult((await runBq(['peek', 'users', '-b', broker, '--registry', registry, '--json'])).stdout)
  const [message] = peek.messages as Array<{body: string; masked: string[]}>
  assert.deepEqual(message.masked, ['data.email', 'data.phone', 'data.profile.full_name', 'data.profile.tckn', 'data.addresses[*].line'])
  assert.doesNotMatch(message.body, /alice@example\.com|555 123|Alice|12345678901|Atatürk/)
  assert.match(message.body, /"email":"\[masked:email\]".*"locale":"tr-TR"/)
  const exported = await runBq(['peek', 'users', '-b', broker, '--registry', registry, '--jsonl'])
  assert.equal(exported.code, 0, exported.stderr)
  assert.doesNotMatch(exported.stdout, /alice@example\.com/)
  assert.match(exported.stdout, /^\{"envelope":\{"job":"urn:babel:users:registered".*"masked":\["data\.email",/)
  writeFileSync(path.join(dir, 'masked.jsonl'), exported.stdout)
})

test('bq replay refuses a masked export line: nothing is published, exit 3, a warning says why', async () => {
  const file = path.join(dir, 'masked-replay.jsonl')
  writeFileSync(file, (await runBq(['peek', 'users', '-b', broker, '--registry', registry, '--jsonl', '--with-headers'])).stdout)
  const replayed = await runBq(['replay', file, '--to', 'users.copy', '--yes', '-b', broker, '--json'])
  assert.equal(replayed.code, 3)
  const output = jsonOutput(replayed.stdout)
  assert.equal(output.ok, false)
  assert.deepEqual((output as unknown as {result: {counts: unknown}}).result.counts, {examined: 1, redriven: 0, would_redrive: 0, skipped: 0, poison: 0, failed: 1})
  assert.match(JSON.stringify(output), /masked export lines are not replayed/)
  const human = await runBq(['replay', file, '--to', 'users.copy', '--yes', '-b', broker])
  assert.match(human.stderr, /masked export lines are not replayed/)
  const copy = jsonResult((await runBq(['peek', 'users.copy', '-b', broker, '--json'])).stdout)
  assert.equal(copy.depth, 0)
})

test('--unmask shows the fields (with a note); --raw cannot mask and is refused; --unmask needs --registry', async () => {
  const clear = await runBq(['peek', 'users', '-b', broker, '--registry', registry, '--unmask', '--jsonl'])
  assert.equal(clear.code, 0, clear.stderr)
  assert.equal(clear.stdout, `${user}\n`)
  assert.match(clear.stderr, /--unmask: the data fields the registry marks x-gdpr-sensitive are shown in clear/)
  const raw = await runBq(['peek', 'users', '-b', broker, '--registry', registry, '--raw'])
  assert.equal(raw.code, 2)
  assert.equal(raw.stdout, '')
  assert.match(raw.stderr, /^Error: --raw .*cannot mask.*\n$/)
  const alone = await runBq(['peek', 'users', '-b', broker, '--unmask'])
  assert.equal(alone.code, 2)
  assert.ok(!hasStackTrace(alone.stderr), alone.stderr)
})
