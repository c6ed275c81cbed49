/**
 * bq as a restricted RabbitMQ user on a vhost of its own, on the shared node: the test creates
 * the vhost and two users (management HTTP API, or rabbitmqctl when the plugin is off) and
 * removes them at the end.
 *
 *   app user:     configure ^app\.   write ^(app\..*|amq\.default)$   read ^app\.
 *   nowrite user: configure ^app\.   write ^$                         read ^app\.
 *
 * Every command works as the app user on its queues; what it may not do exits 6 in one line
 * naming the user, vhost, queue and permission, never the password; a redrive the broker refuses
 * part-way leaves every message where it was (census by meta.id). amqps:// is exercised through a
 * TLS terminator in front of the same node (server certificate from test/support/certs.ts, one
 * listener requiring a client certificate): no second Erlang node with a TLS listener runs here.
 */
import assert from 'node:assert/strict'
import {execFile} from 'node:child_process'
import {randomBytes} from 'node:crypto'
import {readFileSync, rmSync, writeFileSync} from 'node:fs'
import {connect as connectTcp, type AddressInfo} from 'node:net'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {createServer as createTlsServer, type Server} from 'node:tls'
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import {promisify} from 'node:util'

import {portOpen, requireBroker} from '../../support/brokers.js'
import {testCerts, type TestCerts} from '../../support/certs.js'
import {jsonOutput, runBq} from '../../support/cli.js'
import {okResult, peekIds, refusedInOneLine} from '../../support/refusals.js'

const HOST = '127.0.0.1'
const PORT = 5672
const MANAGEMENT = `http://${HOST}:15672/api`
const run = randomBytes(4).toString('hex')
const vhost = `bq-vhost-${run}`
const appUser = {name: `bq-app-${run}`, password: `app-${randomBytes(6).toString('hex')}`}
const noWrite = {name: `bq-nowrite-${run}`, password: `nw-${randomBytes(6).toString('hex')}`}
const urlFor = (user: {name: string; password: string}, onVhost = vhost, scheme = 'amqp', port = PORT, query = '') =>
  `${scheme}://${user.name}:${user.password}@${HOST}:${port}/${encodeURIComponent(onVhost)}${query}`
const guestUrl = `amqp://guest:guest@${HOST}:${PORT}/${encodeURIComponent(vhost)}`

let ready = false
let certs: TestCerts
const servers: Server[] = []
let tlsPort = 0
let mtlsPort = 0

/** Vhost and user administration: the management HTTP API when it is on, else rabbitmqctl (slower: a VM per call). */
async function admin(http: {method: string; path: string; body?: unknown}, ctl: string[]): Promise<void> {
  if (await portOpen(HOST, 15672)) {
    const response = await fetch(`${MANAGEMENT}${http.path}`, {
      method: http.method,
      headers: {authorization: `Basic ${Buffer.from('guest:guest').toString('base64')}`, 'content-type': 'application/json'},
      body: http.body === undefined ? undefined : JSON.stringify(http.body),
    })
    if (!response.ok && !(http.method === 'DELETE' && response.status === 404)) throw new Error(`${http.method} ${http.path}: HTTP ${response.status}`)
    return
  }
  await promisify(execFile)('rabbitmqctl', ctl, {timeout: 60_000})
}

const permissions = (user: string, configure: string, write: string, read: string) =>
  admin({method: 'PUT', path: `/permissions/${encodeURIComponent(vhost)}/${user}`, body: {configure, write, read}}, ['set_permissions', '-p', vhost, user, configure, write, read])

/** A TLS terminator in front of the node: amqps:// end to end (the broker behind it is the real one). */
function tlsProxy(requireClientCertificate: boolean): Promise<number> {
  const server = createTlsServer(
    {cert: readFileSync(certs.serverCert), key: readFileSync(certs.serverKey), ca: readFileSync(certs.ca), requestCert: requireClientCertificate, rejectUnauthorized: requireClientCertificate},
    (client) => {
      const upstream = connectTcp(PORT, HOST)
      client.pipe(upstream).pipe(client)
      client.on('error', () => upstream.destroy())
      upstream.on('error', () => client.destroy())
    },
  )
  server.on('tlsClientError', () => undefined)
  servers.push(server)
  return new Promise((resolve) => server.listen(0, HOST, () => resolve((server.address() as AddressInfo).port)))
}

before(async () => {
  if (!(await portOpen(HOST, PORT))) return
  certs = testCerts()
  await Promise.all([
    admin({method: 'PUT', path: `/vhosts/${encodeURIComponent(vhost)}`}, ['add_vhost', vhost]),
    admin({method: 'PUT', path: `/users/${appUser.name}`, body: {password: appUser.password, tags: ''}}, ['add_user', appUser.name, appUser.password]),
    admin({method: 'PUT', path: `/users/${noWrite.name}`, body: {password: noWrite.password, tags: ''}}, ['add_user', noWrite.name, noWrite.password]),
  ])
  await Promise.all([
    permissions(appUser.name, '^app\\.', '^(app\\..*|amq\\.default)$', '^app\\.'),
    permissions(noWrite.name, '^app\\.', '^$', '^app\\.'),
    permissions('guest', '.*', '.*', '.*'),
  ])
  tlsPort = await tlsProxy(false)
  mtlsPort = await tlsProxy(true)
  ready = true
})

after(async () => {
  for (const server of servers) server.close()
  if (!ready) return
  await Promise.all([
    admin({method: 'DELETE', path: `/vhosts/${encodeURIComponent(vhost)}`}, ['delete_vhost', vhost]),
    admin({method: 'DELETE', path: `/users/${appUser.name}`}, ['delete_user', appUser.name]),
    admin({method: 'DELETE', path: `/users/${noWrite.name}`}, ['delete_user', noWrite.name]),
  ])
})

async function live(t: TestContext): Promise<boolean> {
  if (!(await requireBroker(t, 'RabbitMQ', HOST, PORT))) return false
  assert.ok(ready, 'the vhost and users were created')
  return true
}

const ok = okResult
const ids = peekIds
/** One line on stderr, the exit code and JSON error code asked for, and no password anywhere. */
const refused = async (args: string[], exitCode: number, code: string, pattern: RegExp): Promise<void> => {
  await refusedInOneLine(args, exitCode, code, pattern, [appUser.password, noWrite.password, 'not-the-password'])
}

describe('RabbitMQ: a restricted user on its own vhost', () => {
  test('publish, peek, dlq inspect, dlq redrive, replay and dlq purge work on the queues its regexes allow', async (t) => {
    if (!(await live(t))) return
    const url = urlFor(appUser)
    const published = await runBq(['publish', 'urn:babel:orders:created', '-d', '{"order_id":7}', '-q', 'app.orders.dlq', '--count', '3', '-b', url])
    assert.equal(published.code, 0, published.stderr)
    const sent = published.stdout.trim().split('\n')
    assert.deepEqual(await ids(url, 'app.orders.dlq'), sent)
    const inspect = await ok(['dlq', 'inspect', 'app.orders', '--dlq', 'app.orders.dlq', '--list', '-b', url])
    assert.deepEqual((inspect.messages as Array<{id: string}>).map((m) => m.id), sent)
    const moved = await ok(['dlq', 'redrive', 'app.orders', '--dlq', 'app.orders.dlq', '--to', 'app.orders', '--yes', '-b', url])
    assert.equal((moved.counts as {redriven: number}).redriven, 3)
    assert.deepEqual(await ids(url, 'app.orders'), sent)
    const file = path.join(tmpdir(), `bq-vhost-${run}.jsonl`)
    const exported = await runBq(['peek', 'app.orders', '--jsonl', '--all', '-b', url])
    assert.equal(exported.code, 0, exported.stderr)
    writeFileSync(file, exported.stdout)
    const replayed = await ok(['replay', file, '--as-is', '--to', 'app.replayed', '--yes', '-b', url])
    assert.equal((replayed.counts as {redriven: number}).redriven, 3)
    rmSync(file, {force: true})
    assert.deepEqual(await ids(url, 'app.replayed'), sent)
    const purged = await ok(['dlq', 'purge', 'app.replayed', '--dlq', 'app.replayed', '--no-backup', '--yes', '-b', url])
    assert.equal((purged.counts as {purged: number}).purged, 3)
    assert.deepEqual(await ids(url, 'app.replayed'), [])
  })

  test('a wrong password exits 6 (auth) naming the user, never the password', async (t) => {
    if (!(await live(t))) return
    await refused(['peek', 'app.orders', '-b', urlFor({name: appUser.name, password: 'not-the-password'})], 6, 'auth', new RegExp(`refused the login of user "${appUser.name}": wrong user name or password`))
  })

  test('a vhost the user has no permissions on, or one that does not exist, exits 6 (permission) naming it', async (t) => {
    if (!(await live(t))) return
    await refused(['peek', 'app.orders', '-b', urlFor(appUser, '/')], 6, 'permission', new RegExp(`refused vhost "/" to user "${appUser.name}"`))
    await refused(['peek', 'app.orders', '-b', urlFor(appUser, `${vhost}-missing`)], 6, 'permission', new RegExp(`refused vhost "${vhost}-missing"`))
  })

  test('a queue outside its regexes exits 6 (permission) naming the queue, the vhost and the permission', async (t) => {
    if (!(await live(t))) return
    const made = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', 'other.orders', '-b', guestUrl])
    assert.equal(made.code, 0, made.stderr)
    const pattern = new RegExp(`user "${appUser.name}" has no configure permission on queue "other\\.orders" in vhost "${vhost}"`)
    await refused(['peek', 'other.orders', '-b', urlFor(appUser)], 6, 'permission', pattern)
    await refused(['dlq', 'redrive', 'other', '--dlq', 'other.orders', '--to', 'app.orders', '--yes', '-b', urlFor(appUser)], 6, 'permission', /has no (configure|read) permission on queue "other\.orders"/)
    await refused(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', 'other.new', '-b', urlFor(appUser)], 6, 'permission', /has no configure permission on queue "other\.new"/)
    assert.equal((await ids(guestUrl, 'other.orders')).length, 1)
  })

  test('a redrive refused its writes part-way moves nothing and says every message stayed (census by meta.id)', async (t) => {
    if (!(await live(t))) return
    const count = 200
    const seeded = await runBq(['publish', 'urn:babel:orders:created', '-d', '{"n":1}', '-q', 'app.census.dlq', '--count', String(count), '-b', guestUrl])
    assert.equal(seeded.code, 0, seeded.stderr)
    const sent = seeded.stdout.trim().split('\n')
    const args = ['dlq', 'redrive', 'app.census', '--dlq', 'app.census.dlq', '--to', 'app.census', '--yes', '-b', urlFor(noWrite)]
    const result = await runBq([...args, '--json'])
    assert.equal(result.code, 6, result.stderr)
    const output = jsonOutput(result.stdout)
    assert.ok(!output.ok)
    assert.equal(output.error.code, 'permission')
    assert.match(output.error.message, /every message not moved is still where it was/)
    assert.match(output.error.message, new RegExp(`user "${noWrite.name}" has no write permission on exchange "amq\\.default"`))
    assert.equal((output.result?.counts as {redriven: number}).redriven, 0)
    const left = await ids(guestUrl, 'app.census.dlq')
    const seen = new Set(left)
    const missing = sent.filter((id) => !seen.has(id))
    t.diagnostic(`census: sent ${sent.length}, on the DLQ ${left.length}, missing ${missing.length}, duplicates ${left.length - seen.size}`)
    assert.deepEqual({missing: missing.length, duplicates: left.length - seen.size}, {missing: 0, duplicates: 0})
    const target = await runBq(['peek', 'app.census', '--json', '-b', guestUrl])
    assert.ok(target.code === 1 || (jsonOutput(target.stdout).ok && (jsonOutput(target.stdout).result as {depth: number}).depth === 0), target.stdout)
  })
})

describe('RabbitMQ over amqps:// (a TLS terminator in front of the node)', () => {
  test('ca= trusts the test CA: the command suite works over TLS as the restricted user', async (t) => {
    if (!(await live(t))) return
    const url = urlFor(appUser, vhost, 'amqps', tlsPort, `?ca=${certs.ca}`)
    const published = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', 'app.tls.dlq', '--count', '2', '-b', url])
    assert.equal(published.code, 0, published.stderr)
    assert.doesNotMatch(published.stderr, /DEP0123|Warning/)
    const moved = await ok(['dlq', 'redrive', 'app.tls', '--dlq', 'app.tls.dlq', '--to', 'app.tls', '--yes', '-b', url])
    assert.equal((moved.counts as {redriven: number}).redriven, 2)
    assert.deepEqual(await ids(url, 'app.tls'), published.stdout.trim().split('\n'))
  })

  test('a listener that wants a client certificate: cert= and key= work; without them, exit 4 naming the options', async (t) => {
    if (!(await live(t))) return
    const withCert = urlFor(appUser, vhost, 'amqps', mtlsPort, `?ca=${certs.ca}&cert=${certs.clientCert}&key=${certs.clientKey}`)
    const published = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', 'app.mtls', '-b', withCert])
    assert.equal(published.code, 0, published.stderr)
    await refused(['peek', 'app.mtls', '-b', urlFor(appUser, vhost, 'amqps', mtlsPort, `?ca=${certs.ca}`)], 4, 'tls', /cert=PATH and key=PATH/)
  })

  test('an untrusted certificate, a wrong server name and a plaintext port are exit 4 lines naming the fix', async (t) => {
    if (!(await live(t))) return
    await refused(['peek', 'app.tls', '-b', urlFor(appUser, vhost, 'amqps', tlsPort)], 4, 'tls', /TLS certificate is not trusted: pass ca=PATH/)
    await refused(['peek', 'app.tls', '-b', urlFor(appUser, vhost, 'amqps', tlsPort, `?ca=${certs.otherCa}`)], 4, 'tls', /is not the CA that signed it/)
    await refused(['peek', 'app.tls', '-b', urlFor(appUser, vhost, 'amqps', tlsPort, `?ca=${certs.ca}&servername=wrong-host.invalid`)], 4, 'tls', /not for the name connected to .*servername=NAME/)
    await refused(['peek', 'app.tls', '-b', urlFor(appUser, vhost, 'amqps', PORT, `?ca=${certs.ca}`)], 4, 'tls', /did not answer in TLS on that port/)
    await refused(['peek', 'app.tls', '-b', urlFor(appUser, vhost, 'amqp', PORT, `?ca=${certs.ca}`)], 2, 'usage', /ca= needs TLS: use amqps:\/\//)
  })
})
