/**
 * bq on an Artemis that asks for TLS and grants a limited role (test/brokers/artemis/secure.sh:
 * 127.0.0.1:5681 TLS, 5682 TLS requiring a client certificate; user bq has every permission,
 * user limited only consume+browse on lim.dlq.#, nothing on lim.target.#, and
 * send/consume/browse/createAddress/createDurableQueue on lim.ok.#, never manage).
 *
 * The command suite works over TLS with ca= as the limited user on the queues its role allows;
 * a client certificate is used where the acceptor requires one; every TLS failure is one exit 4
 * line naming the fix; a wrong password exits 6 (auth), a missing permission 6 (permission); a
 * redrive refused its sends part-way leaves every message on the DLQ (census by meta.id).
 */
import assert from 'node:assert/strict'
import {execFileSync} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import {fileURLToPath} from 'node:url'

import {portOpen, requireBroker, underCI} from '../../support/brokers.js'
import {testCerts, type TestCerts} from '../../support/certs.js'
import {jsonOutput, runBq} from '../../support/cli.js'
import {okResult, peekIds, refusedInOneLine} from '../../support/refusals.js'
import {destroyQueues} from './support.js'

const HOST = '127.0.0.1'
const TLS_PORT = Number(process.env.BQ_ARTEMIS_SECURE_TLS_PORT ?? 5681)
const MTLS_PORT = Number(process.env.BQ_ARTEMIS_SECURE_MTLS_PORT ?? 5682)
const SCRIPT = fileURLToPath(new URL('secure.sh', import.meta.url))
const id = randomBytes(4).toString('hex')
const made: string[] = []
let certs: TestCerts

const url = (user: string, password: string, query: string, port = TLS_PORT) => `artemis+ssl://${user}:${password}@${HOST}:${port}${query}`
const admin = () => url('bq', 'bq', `?ca=${certs.ca}`)
const limited = () => url('limited', 'limited-pw', `?ca=${certs.ca}`)
const queue = (prefix: string, name: string) => {
  const full = `${prefix}.${name}-${id}`
  made.push(full)
  return full
}

before(() => {
  certs = testCerts()
})

after(async () => {
  if (made.length > 0 && (await portOpen(HOST, TLS_PORT))) await destroyQueues(admin(), made).catch(() => undefined)
})

/** The broker answers (started here when it is not, outside CI where services.sh starts it). */
async function live(t: TestContext): Promise<boolean> {
  if (!underCI && !(await portOpen(HOST, TLS_PORT))) {
    try {
      execFileSync('bash', [SCRIPT, 'start'], {stdio: ['ignore', 'ignore', 'inherit'], timeout: 240_000})
    } catch {
      // requireBroker says it is not there.
    }
  }
  return requireBroker(t, 'the secure Artemis (test/brokers/artemis/secure.sh)', HOST, TLS_PORT)
}

const ok = okResult
const ids = peekIds
/** One error line with the exit code and JSON code asked for, and no password anywhere. */
const refused = (args: string[], exitCode: number, code: string, pattern: RegExp) => refusedInOneLine(args, exitCode, code, pattern, ['limited-pw', 'wrong-pw-x', ':bq@'])

describe('Artemis over TLS with a limited role', () => {
  test('the command suite over TLS (ca=) as the limited user on the queues its role allows', async (t) => {
    if (!(await live(t))) return
    const dlq = queue('lim.ok', 'orders.dlq')
    const target = queue('lim.ok', 'orders')
    const replayed = queue('lim.ok', 'replayed')
    const published = await runBq(['publish', 'urn:babel:orders:created', '-d', '{"order_id":9}', '-q', dlq, '--count', '3', '-b', limited()])
    assert.equal(published.code, 0, published.stderr)
    const sent = published.stdout.trim().split('\n')
    assert.deepEqual(await ids(limited(), dlq), sent)
    const inspect = await ok(['dlq', 'inspect', target, '--dlq', dlq, '--list', '-b', limited()])
    assert.deepEqual((inspect.messages as Array<{id: string}>).map((m) => m.id), sent)
    const moved = await ok(['dlq', 'redrive', target, '--dlq', dlq, '--to', target, '--yes', '-b', limited()])
    assert.equal((moved.counts as {redriven: number}).redriven, 3)
    assert.deepEqual(await ids(limited(), target), sent)
    const exported = await runBq(['peek', target, '--jsonl', '--all', '-b', limited()])
    assert.equal(exported.code, 0, exported.stderr)
    const file = path.join(tmpdir(), `bq-artemis-secure-${id}.jsonl`)
    writeFileSync(file, exported.stdout)
    try {
      const replay = await ok(['replay', file, '--as-is', '--to', replayed, '--yes', '-b', limited()])
      assert.equal((replay.counts as {redriven: number}).redriven, 3)
    } finally {
      rmSync(file, {force: true})
    }
    assert.deepEqual(await ids(limited(), replayed), sent)
    const purged = await ok(['dlq', 'purge', replayed, '--dlq', replayed, '--no-backup', '--yes', '-b', limited()])
    assert.equal((purged.counts as {purged: number}).purged, 3)
    assert.deepEqual(await ids(admin(), replayed), [])
  })

  test('an acceptor that requires a client certificate: cert= and key= work; without them exit 4 naming the options', async (t) => {
    if (!(await live(t))) return
    const name = queue('lim.ok', 'mtls')
    const withCert = url('limited', 'limited-pw', `?ca=${certs.ca}&cert=${certs.clientCert}&key=${certs.clientKey}`, MTLS_PORT)
    const published = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', name, '-b', withCert])
    assert.equal(published.code, 0, published.stderr)
    assert.deepEqual(await ids(withCert, name), published.stdout.trim().split('\n'))
    await refused(['peek', name, '-b', url('limited', 'limited-pw', `?ca=${certs.ca}`, MTLS_PORT)], 4, 'tls', /cert=PATH and key=PATH/)
  })

  test('untrusted, wrong-host and other-CA certificates are exit 4 lines naming the fix; insecure=true warns', async (t) => {
    if (!(await live(t))) return
    await refused(['peek', 'lim.ok.x', '-b', url('limited', 'limited-pw', '')], 4, 'tls', /TLS certificate is not trusted: pass ca=PATH/)
    await refused(['peek', 'lim.ok.x', '-b', url('limited', 'limited-pw', `?ca=${certs.otherCa}`)], 4, 'tls', /is not the CA that signed it/)
    await refused(['peek', 'lim.ok.x', '-b', url('limited', 'limited-pw', `?ca=${certs.ca}&servername=wrong-host.invalid`)], 4, 'tls', /not for the name connected to .*servername=NAME/)
    await refused(['peek', 'lim.ok.x', '-b', `artemis://limited:limited-pw@${HOST}:${TLS_PORT}?ca=${certs.ca}`], 2, 'usage', /ca= needs TLS: use artemis\+ssl:\/\//)
    await refused(['peek', 'lim.ok.x', '--timeout', '2', '-b', `artemis://limited:limited-pw@${HOST}:${TLS_PORT}`], 4, 'connection', /timed out after 2s \(if that port speaks TLS, use artemis\+ssl:\/\/\)/)
    // insecure=true connects without verifying, and says so on every run.
    const name = queue('lim.ok', 'insecure')
    const insecure = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', name, '-b', url('limited', 'limited-pw', '?insecure=true')])
    assert.equal(insecure.code, 0, insecure.stderr)
    assert.match(insecure.stderr, /TLS certificate verification is off .*insecure=true/)
  })

  test('a wrong password exits 6 (auth) naming the user, never the password', async (t) => {
    if (!(await live(t))) return
    await refused(['peek', 'lim.ok.x', '-b', url('limited', 'wrong-pw-x', `?ca=${certs.ca}`)], 6, 'auth', /refused the login as user "limited": wrong user name or password/)
  })

  test('what the role does not allow exits 6 (permission) naming the user, address and permission', async (t) => {
    if (!(await live(t))) return
    const name = queue('lim.target', 'closed')
    assert.equal((await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', name, '-b', admin()])).code, 0)
    await refused(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', name, '-b', limited()], 6, 'permission', new RegExp(`refused to send to "${name.replace(/\./g, '\\.')}".*the send permission for user limited`))
    await refused(['peek', name, '-b', limited()], 6, 'permission', /the browse permission for user limited/)
    // A queue that is not there yet needs createAddress first, and says so.
    await refused(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue('lim.dlq', 'new'), '-b', limited()], 6, 'permission', /the create_address permission for user limited/)
    const dlq = queue('lim.dlq', 'closed')
    assert.equal((await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', dlq, '-b', admin()])).code, 0)
    await refused(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', dlq, '-b', limited()], 6, 'permission', /the send permission for user limited/)
  })

  test('a redrive refused its sends part-way leaves every message on the DLQ and says so (census by meta.id)', async (t) => {
    if (!(await live(t))) return
    const dlq = queue('lim.dlq', 'census')
    const target = queue('lim.target', 'census')
    const count = 200
    const seeded = await runBq(['publish', 'urn:babel:orders:created', '-d', '{"n":1}', '-q', dlq, '--count', String(count), '-b', admin()])
    assert.equal(seeded.code, 0, seeded.stderr)
    const sent = seeded.stdout.trim().split('\n')
    // The target exists (one message of its own): what is refused is the send, not its creation.
    const marker = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', target, '-b', admin()])
    assert.equal(marker.code, 0, marker.stderr)
    const result = await runBq(['dlq', 'redrive', target, '--dlq', dlq, '--to', target, '--yes', '--json', '-b', limited()])
    assert.equal(result.code, 6, result.stderr)
    const output = jsonOutput(result.stdout)
    assert.ok(!output.ok)
    assert.equal(output.error.code, 'permission')
    assert.match(output.error.message, /every message not moved is still where it was/)
    assert.match(output.error.message, /the send permission for user limited/)
    assert.equal((output.result?.counts as {redriven: number}).redriven, 0)
    const left = await ids(admin(), dlq)
    const seen = new Set(left)
    const missing = sent.filter((one) => !seen.has(one))
    t.diagnostic(`census: sent ${sent.length}, on the DLQ ${left.length}, missing ${missing.length}, duplicates ${left.length - seen.size}`)
    assert.deepEqual({missing: missing.length, duplicates: left.length - seen.size}, {missing: 0, duplicates: 0})
    assert.deepEqual(await ids(admin(), target), [marker.stdout.trim()])
  })
})
