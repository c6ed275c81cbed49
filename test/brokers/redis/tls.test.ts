/**
 * Redis over TLS with ACL users, end to end through bin/run.js, against the TLS-only servers of
 * test/brokers/redis/tls.sh (started here if they are not running; scripts/services.sh starts
 * them for CI). The `limited` user holds only the rules the README lists as bq's minimum, so the
 * first test also checks that list.
 */
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {execFileSync} from 'node:child_process'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {Redis} from 'ioredis'

import {requireBroker, uniqueQueue} from '../../support/brokers.js'
import {testCerts, type TestCerts} from '../../support/certs.js'
import {type CliResult, hasStackTrace, jsonOutput, jsonResult, runBq} from '../../support/cli.js'
import {repoRoot} from '../../support/conformance.js'

const script = path.join(repoRoot, 'test', 'brokers', 'redis', 'tls.sh')
const port = Number(process.env.BQ_REDIS_TLS_PORT ?? 7201)
const ports = {main: port, clientAuth: port + 1, expired: port + 2, wrongHost: port + 3}
const users = {
  bq: 'bq-test-secret',
  limited: 'limited-test-secret',
  reader: 'reader-test-secret',
} as const

let certs: TestCerts
let workDir: string

/** A rediss:// URL for `user` on `at`, with the given query (paths are percent-encoded). */
function url(user: keyof typeof users | '', params: Record<string, string>, at = ports.main, password: string = user === '' ? '' : users[user]): string {
  const auth = user === '' ? '' : `${user}:${encodeURIComponent(password)}@`
  const query = new URLSearchParams(params).toString()
  return `rediss://${auth}localhost:${at}/0${query === '' ? '' : `?${query}`}`
}

const trusted = () => ({ca: certs.ca})

async function ready(t: TestContext): Promise<boolean> {
  return requireBroker(t, 'Redis over TLS (test/brokers/redis/tls.sh)', '127.0.0.1', port)
}

/** Exit code and stderr line, with no stack trace and never any of the test passwords. */
function assertClean(result: CliResult): void {
  assert.ok(!hasStackTrace(result.stderr), result.stderr)
  for (const secret of Object.values(users)) {
    assert.ok(!result.stdout.includes(secret) && !result.stderr.includes(secret), `a password leaked: ${result.stdout}${result.stderr}`)
  }
}

async function bq(args: string[]): Promise<CliResult> {
  const result = await runBq(args)
  assertClean(result)
  return result
}

/** The meta.id of every message in a queue (peek --jsonl as the full user). */
async function ids(queue: string): Promise<string[]> {
  const peek = await bq(['peek', queue, '-b', url('bq', trusted()), '--jsonl', '--limit', '1000'])
  assert.equal(peek.code, 0, peek.stderr)
  return peek.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => (JSON.parse(line) as {meta: {id: string}}).meta.id)
}

/** The example DLQ export, rewritten so its messages' original queue is `queue`. */
function dlqExport(queue: string): string {
  const file = path.join(workDir, `${queue}.jsonl`)
  writeFileSync(file, readFileSync(path.join(repoRoot, 'examples', 'orders.dlq.jsonl'), 'utf8').replaceAll('"original_queue":"orders"', `"original_queue":"${queue}"`))
  return file
}

before(() => {
  workDir = mkdtempSync(path.join(tmpdir(), 'bq-redis-tls-'))
  certs = testCerts()
  try {
    execFileSync('bash', [script, 'start'], {stdio: ['ignore', 'ignore', 'inherit']})
  } catch {
    // ready() then skips (or, under CI, fails) each test with the reason.
  }
})

after(() => rmSync(workDir, {recursive: true, force: true}))

describe('Redis over TLS (rediss://) with ACL users', () => {
  test('publish, peek, dlq inspect, dlq redrive, dlq purge and replay over rediss:// with ca=, as a user holding only the documented minimum (-@all +@read +@write +eval +evalsha +info)', async (t) => {
    if (!(await ready(t))) return
    const queue = uniqueQueue('rw-tls')
    const limited = url('limited', trusted())
    const replayed = await bq(['replay', dlqExport(queue), '--as-is', '--to', `${queue}.dlq`, '--yes', '-b', limited])
    assert.equal(replayed.code, 0, replayed.stderr)
    const published = await bq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '-b', limited])
    assert.equal(published.code, 0, published.stderr)
    const peek = jsonResult((await bq(['peek', `${queue}.dlq`, '-b', limited, '--json'])).stdout)
    assert.equal(peek.depth, 4)
    const inspect = jsonResult((await bq(['dlq', 'inspect', queue, '-b', limited, '--json'])).stdout)
    assert.equal(inspect.scanned, 4, JSON.stringify(inspect))
    const redrive = await bq(['dlq', 'redrive', queue, '--max', '2', '--yes', '-b', limited, '--json'])
    assert.equal(redrive.code, 0, redrive.stdout + redrive.stderr)
    assert.equal((jsonResult(redrive.stdout).counts as {redriven: number}).redriven, 2)
    const purge = await bq(['dlq', 'purge', queue, '--yes', '--no-backup', '-b', limited])
    assert.equal(purge.code, 0, purge.stderr)
    assert.deepEqual(await ids(`${queue}.dlq`), [])
    assert.equal((await ids(queue)).length, 3)
  })

  test('a server that requires a client certificate: without one, exit 4 names cert= and key=; with cert= and key= it works', async (t) => {
    if (!(await ready(t))) return
    const queue = uniqueQueue('client-cert')
    const refused = await bq(['peek', queue, '-b', url('bq', trusted(), ports.clientAuth)])
    assert.equal(refused.code, 4, refused.stderr)
    assert.match(refused.stderr, /client certificate: pass cert=PATH and key=PATH/)
    const withCert = url('bq', {ca: certs.ca, cert: certs.clientCert, key: certs.clientKey}, ports.clientAuth)
    const published = await bq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--count', '2', '-b', withCert])
    assert.equal(published.code, 0, published.stderr)
    const peek = await bq(['peek', queue, '-b', withCert, '--json'])
    assert.equal(jsonResult(peek.stdout).depth, 2)
  })

  test('an untrusted certificate: exit 4, one line naming ca= (and saying when the ca= given is not the signer)', async (t) => {
    if (!(await ready(t))) return
    const untrusted = await bq(['peek', 'q', '-b', url('bq', {})])
    assert.equal(untrusted.code, 4, untrusted.stderr)
    assert.match(untrusted.stderr, /^Error: cannot connect to rediss:\/\/bq:\*\*\*@localhost:\d+\/0: the broker's TLS certificate is not trusted: pass ca=PATH with the CA that signed it, or set NODE_EXTRA_CA_CERTS\n$/)
    const otherCa = await bq(['peek', 'q', '-b', url('bq', {ca: certs.otherCa})])
    assert.equal(otherCa.code, 4, otherCa.stderr)
    assert.match(otherCa.stderr, /other-ca\.pem is not the CA that signed it\): pass ca=PATH/)
  })

  test('a certificate for another host: exit 4 names servername=, and servername= with the name it lists connects', async (t) => {
    if (!(await ready(t))) return
    const wrong = await bq(['peek', 'q', '-b', url('bq', trusted(), ports.wrongHost)])
    assert.equal(wrong.code, 4, wrong.stderr)
    assert.match(wrong.stderr, /not for the name connected to \(it lists DNS:wrong-host\.invalid\): connect by a name it lists, or pass servername=NAME/)
    const named = await bq(['peek', 'q', '-b', url('bq', {ca: certs.ca, servername: 'wrong-host.invalid'}, ports.wrongHost)])
    assert.equal(named.code, 0, named.stderr)
  })

  test('an expired certificate: exit 4 says so', async (t) => {
    if (!(await ready(t))) return
    const expired = await bq(['peek', 'q', '-b', url('bq', trusted(), ports.expired)])
    assert.equal(expired.code, 4, expired.stderr)
    assert.match(expired.stderr, /the broker's TLS certificate has expired/)
  })

  test('insecure=true connects without ca= and warns on stderr on every run', async (t) => {
    if (!(await ready(t))) return
    const queue = uniqueQueue('insecure')
    const insecure = url('bq', {insecure: 'true'})
    const published = await bq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '-b', insecure])
    assert.equal(published.code, 0, published.stderr)
    assert.match(published.stderr, /Warning: TLS certificate verification is off for rediss:\/\/bq:\*\*\*@localhost:\d+\/0\?insecure=true/)
    const peek = await bq(['peek', queue, '-b', insecure, '--json'])
    assert.equal(jsonResult(peek.stdout).depth, 1)
    assert.match(peek.stderr, /certificate verification is off/)
  })

  test('a wrong password is exit 6 naming the user, and the password appears nowhere; no password at all is exit 6 naming the fix', async (t) => {
    if (!(await ready(t))) return
    const wrongPassword = 'not-the-bq-Passw0rd'
    const wrong = await bq(['peek', 'q', '-b', url('bq', trusted(), ports.main, wrongPassword), '--json'])
    assert.equal(wrong.code, 6, wrong.stdout + wrong.stderr)
    const output = jsonOutput(wrong.stdout)
    assert.ok(!output.ok)
    assert.equal(output.error.code, 'auth')
    assert.match(output.error.message, /refused the credentials of user "bq": wrong password, no such user, or the user is disabled/)
    assert.ok(!wrong.stdout.includes(wrongPassword) && !wrong.stderr.includes(wrongPassword), wrong.stdout + wrong.stderr)
    const none = await bq(['peek', 'q', '-b', url('', trusted())])
    assert.equal(none.code, 6, none.stderr)
    assert.match(none.stderr, /wants a password \(NOAUTH\) and the URL gives none: put it in the URL/)
  })

  test('a read-only user peeks and dry-runs; a command its ACL does not allow (NOPERM) is exit 6 naming the command and the rule', async (t) => {
    if (!(await ready(t))) return
    const reader = url('reader', trusted())
    const queue = uniqueQueue('reader')
    const peek = await bq(['peek', queue, '-b', reader])
    assert.equal(peek.code, 0, peek.stderr)
    // Reading is all a dry run needs.
    const dry = await bq(['dlq', 'redrive', queue, '--dry-run', '-b', reader])
    assert.equal(dry.code, 0, dry.stderr)
    const publish = await bq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '-b', reader, '--json'])
    assert.equal(publish.code, 6, publish.stdout)
    const output = jsonOutput(publish.stdout)
    assert.ok(!output.ok)
    assert.equal(output.error.code, 'permission')
    assert.match(output.error.message, /Redis user "reader" may not run RPUSH .*allow it in the user's ACL with \+rpush/)
  })

  test('a redrive whose user may not write the target: exit 6, and every message stays on the DLQ in order (census by meta.id)', async (t) => {
    if (!(await ready(t))) return
    const dlq = uniqueQueue('rw-census')
    // The limited user reads every key but writes only bqtest-rw-*: this target is read-only to it.
    const target = uniqueQueue('ro-target')
    const full = url('bq', trusted())
    const published = await bq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', dlq, '--count', '30', '-b', full])
    assert.equal(published.code, 0, published.stderr)
    const sent = published.stdout.trim().split('\n')
    assert.equal(sent.length, 30)
    const run = await bq(['dlq', 'redrive', dlq, '--dlq', dlq, '--to', target, '--yes', '-b', url('limited', trusted()), '--json'])
    assert.equal(run.code, 6, run.stdout + run.stderr)
    const output = jsonOutput(run.stdout)
    assert.ok(!output.ok)
    assert.equal(output.error.code, 'permission')
    assert.match(output.error.message, new RegExp(`user "limited" has no permission for the key ${target} .*nothing was moved\\).*~${target}\\*`))
    assert.equal((output.result?.counts as {redriven: number}).redriven, 0)
    // Census: every message sent is on the DLQ once, in order; none reached the target or stayed staged.
    const seen = await ids(dlq)
    const missing = sent.filter((id) => !seen.includes(id))
    const duplicates = seen.length - new Set(seen).size
    assert.deepEqual({sent: sent.length, seen: seen.length, missing: missing.length, duplicates}, {sent: 30, seen: 30, missing: 0, duplicates: 0})
    assert.deepEqual(seen, sent)
    assert.deepEqual(await ids(target), [])
    const client = new Redis({host: '127.0.0.1', port, username: 'bq', password: users.bq, tls: {ca: [readFileSync(certs.ca, 'utf8')], servername: 'localhost'}, lazyConnect: true, retryStrategy: () => null})
    try {
      await client.connect()
      assert.deepEqual(await Promise.all([client.llen(`${dlq}:processing`), client.llen(`${dlq}:bq-held`), client.exists(`${dlq}:bq-lock`)]), [0, 0, 0])
    } finally {
      client.disconnect()
    }
  })

  test('plaintext redis:// to the TLS-only port is exit 4 saying the server may want TLS; rediss:// to a plaintext port says it did not answer in TLS', async (t) => {
    if (!(await ready(t))) return
    const plain = await bq(['peek', 'q', '-b', `redis://bq:${users.bq}@localhost:${port}/0`])
    assert.equal(plain.code, 4, plain.stderr)
    assert.match(plain.stderr, /the server may want TLS: use rediss:\/\//)
    // The shared plaintext Redis: a TLS hello gets no answer there, so a short --timeout bounds the wait.
    if (!(await requireBroker(t, 'Redis', '127.0.0.1', 6379))) return
    const tlsToPlain = await bq(['peek', 'q', '-b', `rediss://127.0.0.1:6379/0?ca=${encodeURIComponent(certs.ca)}`, '--timeout', '1'])
    assert.equal(tlsToPlain.code, 4, tlsToPlain.stderr)
    assert.match(tlsToPlain.stderr, /the broker did not answer in TLS on that port/)
  })

  test('TLS parameters on a plaintext redis:// URL are a usage error (exit 2)', async () => {
    const refused = await bq(['peek', 'q', '-b', `redis://127.0.0.1:6379/0?ca=${encodeURIComponent(certs.ca)}`])
    assert.equal(refused.code, 2, refused.stderr)
    assert.match(refused.stderr, /ca= needs TLS: use rediss:\/\//)
  })
})
