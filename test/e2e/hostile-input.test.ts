/**
 * What a careless or hostile operator can throw at bq, end to end through bin/run.js: each case
 * must end with a clear one-line error (or the right count), never a leaked secret, a hang or
 * unbounded memory.
 */
import {after, before, describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {execFileSync} from 'node:child_process'
import {mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {hasStackTrace, runBq} from '../support/cli.js'

const good = '{"job":"urn:babel:orders:created","trace_id":"7b3f9c2a-e41d-4f88-9b2a-1c0d5e6f7a8b","data":{"order_id":1042},"meta":{"id":"f1e2d3c4-b5a6-4789-90ab-cdef01234567","queue":"orders","lang":"node","schema_version":1,"created_at":1749132727000},"attempts":0}'
let dir: string

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-hostile-'))
})
after(() => rmSync(dir, {recursive: true, force: true}))

describe('a broker URL mistyped without ://', () => {
  for (const url of ['amqp//guest:s3cr3t@127.0.0.1:5672', 'redis:/:s3cr3t@127.0.0.1:6379']) {
    test(`${url.split(':')[0]}: the password appears neither on stderr nor in --json`, async () => {
      const text = await runBq(['peek', 'orders', '-b', url])
      assert.equal(text.code, 2)
      assert.doesNotMatch(text.stderr + text.stdout, /s3cr3t/)
      assert.match(text.stderr, /not a broker URL/)
      assert.ok(!hasStackTrace(text.stderr))
      const json = await runBq(['peek', 'orders', '-b', url, '--json'])
      assert.equal(json.code, 2)
      assert.doesNotMatch(json.stderr + json.stdout, /s3cr3t/)
    })
  }
})

describe('validate: inputs that never end or repeat', () => {
  test('/dev/zero is refused at the message size limit instead of running forever', async () => {
    const result = await runBq(['validate', '/dev/zero'], {timeoutMs: 60_000})
    assert.equal(result.code, 1, result.stderr)
    assert.match(result.stdout, /longer than 16 MiB/)
    assert.ok(!hasStackTrace(result.stderr))
  })

  test('a 20 MiB document without a line break is refused at the limit, with its position', async () => {
    const big = path.join(dir, 'big.json')
    writeFileSync(big, `{"job":"urn:babel:orders:created","data":{"blob":"${'x'.repeat(20 * 1024 * 1024)}"}}`)
    const result = await runBq(['validate', big])
    assert.equal(result.code, 1, result.stderr)
    assert.match(result.stdout, /big\.json:1/)
    assert.match(result.stdout, /16 MiB/)
  })

  test('a FIFO nobody writes to is refused at once, not waited on (stdin is -)', async () => {
    const fifo = path.join(dir, 'validate.fifo')
    execFileSync('mkfifo', [fifo])
    const result = await runBq(['validate', fifo], {timeoutMs: 15_000})
    assert.equal(result.code, 1, result.stdout + result.stderr)
    assert.match(result.stdout, /is a FIFO \(named pipe\), not a regular file \(use - to read stdin\)\s+\[input\.not_regular\]/)
    assert.ok(!hasStackTrace(result.stderr))
  })

  test('a glob through a symlink loop counts each file once', async () => {
    const root = path.join(dir, 'loop')
    mkdirSync(path.join(root, 'sub'), {recursive: true})
    writeFileSync(path.join(root, 'sub', 'one.json'), good)
    symlinkSync(root, path.join(root, 'sub', 'back'))
    const result = await runBq(['validate', `${root}/**/*.json`])
    assert.equal(result.code, 0, result.stdout + result.stderr)
    assert.match(result.stdout, /1 message in 1 input: all valid/)
  })
})

describe('peek exports what it is asked for', () => {
  test('--jsonl --limit above the filter scan cap (10,000) exports every message asked for', async () => {
    const broker = `sqlite://${path.join(dir, 'export.db')}`
    const published = await runBq(['publish', 'urn:babel:orders:created', '-q', 'orders', '-d', '{"n":1}', '--count', '10050', '-b', broker], {timeoutMs: 120_000})
    assert.equal(published.code, 0, published.stderr)
    const result = await runBq(['peek', 'orders', '--jsonl', '--limit', '20000', '-b', broker], {timeoutMs: 120_000})
    assert.equal(result.code, 0, result.stderr)
    assert.equal(result.stdout.trim().split('\n').length, 10050)
  })
})

describe('publish: data that never ends or is too big', () => {
  const broker = () => `sqlite://${path.join(dir, 'publish-limits.db')}`

  test('--data-file /dev/zero is refused at the message size limit, nothing published', async () => {
    const result = await runBq(['publish', 'urn:babel:orders:created', '-q', 'orders', '--data-file', '/dev/zero', '-b', broker()], {timeoutMs: 60_000})
    assert.equal(result.code, 2, result.stderr)
    assert.equal(result.stderr.trim(), "Error: --data-file /dev/zero is larger than 16 MiB (bq's largest message): nothing was published")
    assert.equal(hasStackTrace(result.stderr), false)
    const json = await runBq(['publish', 'urn:babel:orders:created', '-q', 'orders', '--data-file', '/dev/zero', '-b', broker(), '--json'], {timeoutMs: 60_000})
    assert.equal(JSON.parse(json.stdout).error.code, 'input.too_large')
  })

  test('--data-file naming a FIFO nobody writes to is refused at once, nothing published', async () => {
    const fifo = path.join(dir, 'data.fifo')
    execFileSync('mkfifo', [fifo])
    const result = await runBq(['publish', 'urn:babel:orders:created', '-q', 'orders', '--data-file', fifo, '-b', broker()], {timeoutMs: 15_000})
    assert.equal(result.code, 2, result.stderr)
    assert.equal(result.stderr.trim(), `Error: cannot read --data-file ${fifo}: it is a FIFO (named pipe), not a regular file (pipe the data to stdin instead); nothing was published`)
  })

  test('stdin above the limit is refused; a directory is a one-line error; nothing was published', async () => {
    const big = await runBq(['publish', 'urn:babel:orders:created', '-q', 'orders', '-b', broker()], {stdin: Buffer.alloc(17 * 1024 * 1024, 0x20), timeoutMs: 60_000})
    assert.equal(big.code, 2, big.stderr)
    assert.match(big.stderr, /^Error: stdin is larger than 16 MiB/)
    const directory = await runBq(['publish', 'urn:babel:orders:created', '-q', 'orders', '--data-file', dir, '-b', broker()])
    assert.equal(directory.code, 2)
    assert.equal(directory.stderr.trim(), `Error: cannot read --data-file ${dir}: it is a directory`)
    const peek = await runBq(['peek', 'orders', '-b', broker(), '--json'])
    assert.equal(JSON.parse(peek.stdout).result.depth, 0)
  })
})

describe('a broker URL that points at something else', () => {
  test('redis:// at a server that answers like HTTP: exit 4, one line asking for the right host and port', async () => {
    const {createServer} = await import('node:net')
    const server = createServer((socket) => {
      socket.on('error', () => {})
      socket.once('data', () => socket.end('HTTP/1.1 400 Bad Request\r\n\r\n'))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const port = (server.address() as {port: number}).port
      const result = await runBq(['peek', 'orders', '-b', `redis://127.0.0.1:${port}`])
      assert.equal(result.code, 4, result.stderr)
      assert.equal(result.stderr.trim(), `Error: cannot connect to redis://127.0.0.1:${port}: the server there does not speak the Redis protocol (is this the right host and port?)`)
    } finally {
      server.close()
    }
  })
})
