// @test-uses redis
/**
 * Small edges an operator meets, through bin/run.js on the embedded store and Redis: publish with
 * nothing on stdin, dry-run progress wording, shell-quoted hints, a misspelled Redis queue, long
 * run listings, `--json` on oclif's own commands, control bytes from names and bodies.
 */
import {after, before, describe, test} from 'node:test'
import type {TestContext} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {depth, redisUrl} from '../suites/command-suite.js'
import {requireBroker, uniqueQueue} from '../support/brokers.js'
import {binRun, hasStackTrace, jsonOutput, jsonResult, runBq} from '../support/cli.js'

/** Runs a line in sh, `bq` being the built CLI. */
async function shell(line: string): Promise<{code: number; stderr: string}> {
  const {spawnSync} = await import('node:child_process')
  const result = spawnSync('sh', ['-c', `bq() { "${process.execPath}" "${binRun}" "$@"; }; ${line}`], {env: {...process.env, NO_COLOR: '1', ...env}, encoding: 'utf8'})
  return {code: result.status ?? 1, stderr: result.stderr}
}

let dir: string
let env: NodeJS.ProcessEnv
before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-operator-edges-'))
  env = {XDG_DATA_HOME: dir, BQ_BROKER: '', BQ_LEDGER: path.join(dir, 'ledger.db')}
})
after(() => rmSync(dir, {recursive: true, force: true}))

const cases = [
  {name: 'embedded sqlite', url: () => `sqlite://${path.join(dir, 'q.db')}`, available: async (_t: TestContext) => true},
  {name: 'redis', url: () => redisUrl, available: (t: TestContext) => requireBroker(t, 'Redis', new URL(redisUrl).hostname, Number(new URL(redisUrl).port || 6379))},
]

for (const c of cases) {
  describe(`operator edges (${c.name})`, () => {
    test('publish with an empty stdin and no --data is refused, and publishes nothing', async (t) => {
      if (!(await c.available(t))) return
      const queue = uniqueQueue('empty-stdin')
      for (const stdin of ['', '  \n']) {
        const result = await runBq(['publish', 'urn:babel:orders:created', '-q', queue, '-b', c.url()], {env, stdin})
        assert.equal(result.code, 2, result.stderr)
        assert.ok(!hasStackTrace(result.stderr), result.stderr)
        assert.match(result.stderr, /^Error: stdin is empty and there is no --data/m)
      }
      assert.equal(await depth(c.url(), queue), 0)
      const explicit = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '-b', c.url()], {env})
      assert.equal(explicit.code, 0, explicit.stderr)
    })

    test('runs show gives counts of the ids a run touched, and the ids only with --ids', async (t) => {
      if (!(await c.available(t))) return
      const queue = uniqueQueue('runs-show')
      const published = await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', queue, '--count', '2500', '-b', c.url(), '--json'], {env, timeoutMs: 60_000})
      assert.equal(published.code, 0, published.stderr)
      const runId = jsonResult(published.stdout).run_id as string
      const shown = await runBq(['runs', 'show', runId], {env})
      assert.equal(shown.code, 0, shown.stderr)
      assert.match(shown.stdout, /^published: +2500 ids \(--ids lists them\)$/m)
      assert.ok(shown.stdout.split('\n').length < 30, `${shown.stdout.split('\n').length} lines`)
      const listed = await runBq(['runs', 'show', runId, '--ids'], {env})
      assert.equal(listed.stdout.split('\n').filter((line) => /^ {2}[0-9a-f-]{36}$/.test(line)).length, 2500)
    })

    test('a misspelled queue: redrive and inflight ls say it does not exist (exit 0, as for an empty queue)', async (t) => {
      if (!(await c.available(t))) return
      const queue = uniqueQueue('misspelled')
      const redrive = await runBq(['dlq', 'redrive', queue, '--yes', '-b', c.url()], {env})
      assert.equal(redrive.code, 0, redrive.stderr)
      assert.match(redrive.stderr, new RegExp(`^Warning: no queue ${queue}\\.dlq on .*a misspelled name\\?`, 'm'))
      const inflight = await runBq(['inflight', 'ls', queue, '-b', c.url(), '--json'], {env})
      assert.equal(inflight.code, 0, inflight.stderr)
      const output = jsonOutput(inflight.stdout)
      assert.ok(output.warnings.some((w) => w.startsWith(`no queue ${queue} on `)), JSON.stringify(output.warnings))
      // A queue that holds a message is not noted.
      assert.equal((await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', `${queue}.dlq`, '-b', c.url()], {env})).code, 0)
      const dry = await runBq(['dlq', 'redrive', queue, '--dry-run', '-b', c.url()], {env})
      assert.doesNotMatch(dry.stderr, /no queue/)
    })

    test('control bytes from queue names and bodies are escaped in errors, warnings, titles, TSV and --list lines', async (t) => {
      if (!(await c.available(t))) return
      // A command line cannot carry NUL: the name has ESC, a newline and BEL; the bodies have NUL too.
      const queue = `${uniqueQueue('ctl')}\u001b[31m\n\u0007x`
      // eslint-disable-next-line no-control-regex -- raw control bytes are what must not appear
      const raw = /[\u0000-\u0008\u000B-\u001F\u007F]/
      const noRaw = (text: string, what: string) => assert.doesNotMatch(text, raw, `${what}: ${JSON.stringify(text)}`)
      // A dead letter whose reason and error carry ESC, NUL and a newline.
      const letter = JSON.stringify({
        job: 'urn:babel:orders:created', trace_id: '0b6c3f1e-2d4a-4e8b-9c1d-3e5f7a9b1c2d', data: {}, meta: {id: '4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa001', queue: 'orders', lang: 'php', schema_version: 1, created_at: 1764489600000}, attempts: 3,
        dead_letter: {reason: 'bad\u001b[2J\u0000reason\nline2', error: 'e\u001b]0;title\u0007', failed_at: 1764489660000, original_queue: 'orders', attempts: 3, lang: 'php'},
      })
      const file = path.join(dir, `ctl-${Date.now()}.jsonl`)
      writeFileSync(file, `${letter}\n`)
      const seeded = await runBq(['replay', file, '--as-is', '--to', `${queue}.dlq`, '--yes', '-b', c.url()], {env})
      assert.equal(seeded.code, 0, seeded.stderr)

      const inspect = await runBq(['dlq', 'inspect', queue, '-b', c.url()], {env})
      assert.equal(inspect.code, 0, inspect.stderr)
      noRaw(inspect.stdout, 'inspect TSV')
      assert.match(inspect.stdout, /bad\\x1b\[2J\\0reason/)
      const dry = await runBq(['dlq', 'redrive', queue, '--dry-run', '-b', c.url()], {env})
      noRaw(dry.stdout, 'redrive --list lines')
      noRaw(dry.stderr, 'redrive summary')
      const peek = await runBq(['peek', `${queue}.dlq`, '-b', c.url()], {env})
      noRaw(peek.stderr, 'peek title')
      assert.match(peek.stderr, /\\x1b\[31m\\n\\x07x\.dlq on /)
      noRaw(peek.stdout, 'peek TSV')
      const missing = await runBq(['dlq', 'redrive', `${queue}-none`, '--yes', '-b', c.url()], {env})
      assert.match(missing.stderr, /^Warning: no queue .*\\x1b\[31m/m)
      noRaw(missing.stderr, 'warning')
      const refused = await runBq(['dlq', 'redrive', queue, '--to', `${queue}.dlq`, '--yes', '-b', c.url()], {env})
      assert.equal(refused.code, 2, refused.stderr)
      assert.match(refused.stderr, /^Error: --to .*\\x1b\[31m\\n\\x07x\.dlq is the dead-letter queue/m)
      noRaw(refused.stderr, 'error')
    })

    test("purge's restore hint is shell-quoted: pasted into a shell, it restores the DLQ", async (t) => {
      if (!(await c.available(t))) return
      const queue = `${uniqueQueue('purge')} it's`
      const dlq = `${queue}.dlq`
      assert.equal((await runBq(['publish', 'urn:babel:orders:created', '-d', '{}', '-q', dlq, '--count', '3', '-b', c.url()], {env})).code, 0)
      const backup = path.join(dir, `backup ${Date.now()}.jsonl`)
      const purged = await runBq(['dlq', 'purge', queue, '--backup', backup, '--yes', '-b', c.url()], {env})
      assert.equal(purged.code, 0, purged.stderr)
      assert.equal(await depth(c.url(), dlq), 0)
      const hint = /restore with: (.*)\)$/m.exec(purged.stderr)
      assert.ok(hint, purged.stderr)
      assert.match(hint[1], /^bq replay '/)
      const restored = await shell(`${hint[1]} --yes -b '${c.url()}'`)
      assert.equal(restored.code, 0, restored.stderr)
      assert.equal(await depth(c.url(), dlq), 3)
    })
  })
}

describe('per-command help', () => {
  test('every broker command whose help lists exit codes lists 6 (refused) beside 4 (unreachable)', async () => {
    const commands = [['publish'], ['replay'], ['dlq', 'redrive'], ['dlq', 'purge'], ['dlq', 'edit'], ['dlq', 'triage'], ['dlq', 'ls'], ['inflight', 'ls'], ['inflight', 'return']]
    for (const command of commands) {
      const help = await runBq([...command, '--help'], {env})
      assert.equal(help.code, 0, help.stderr)
      const text = help.stdout.replace(/\s+/g, ' ')
      assert.match(text, /Exit status: .*\b4 (when|the broker)/, command.join(' '))
      assert.match(text, /\b6 when the broker refuses the credentials or a permission/, command.join(' '))
    }
  })
})

describe('--json on oclif commands and unknown commands gives the one envelope', () => {
  test('help, help COMMAND, version: ok with their facts; autocomplete and an unknown command: a usage error, exit 2', async () => {
    const cases: Array<{args: string[]; code: number; check: (output: ReturnType<typeof jsonOutput>) => void}> = [
      {args: ['help', '--json'], code: 0, check: (o) => assert.ok(o.ok && (o.result.commands as Array<{command: string}>).some((c) => c.command === 'dlq redrive'))},
      {args: ['help', 'dlq', 'redrive', '--json'], code: 0, check: (o) => assert.ok(o.ok && o.result.command === 'dlq redrive' && Array.isArray(o.result.flags))},
      {args: ['version', '--json'], code: 0, check: (o) => assert.ok(o.ok && typeof o.result.version === 'string')},
      {args: ['autocomplete', '--json'], code: 2, check: (o) => assert.ok(!o.ok && o.error.code === 'usage' && o.error.exit_code === 2)},
      {args: ['nosuch', '--json'], code: 2, check: (o) => assert.ok(!o.ok && o.error.code === 'usage' && /"nosuch" is not a bq command/.test(o.error.message))},
      {args: ['help', 'nosuch', '--json'], code: 2, check: (o) => assert.ok(!o.ok && o.error.exit_code === 2)},
    ]
    for (const c of cases) {
      const result = await runBq(c.args, {env})
      assert.equal(result.code, c.code, `${c.args.join(' ')}: ${result.stdout}${result.stderr}`)
      assert.equal(result.stderr, '', c.args.join(' '))
      c.check(jsonOutput(result.stdout))
    }
  })
})

describe('TLS parameters', () => {
  test('ca= twice and insecure= other than true/false are refused (exit 2) before any connection', async () => {
    for (const url of ['rediss://127.0.0.1:1/0?ca=/a.pem&ca=/b.pem', 'amqps://127.0.0.1:1?ca=/a.pem&ca=/b.pem']) {
      const result = await runBq(['peek', 'q', '-b', url], {env})
      assert.equal(result.code, 2, result.stderr)
      assert.match(result.stderr, /^Error: .*: ca= is given 2 times: give it once$/m)
    }
    for (const value of ['yes', '1', 'TRUE', 'no']) {
      const result = await runBq(['peek', 'q', '-b', `rediss://127.0.0.1:1/0?insecure=${value}`], {env})
      assert.equal(result.code, 2, `${value}: ${result.stderr}`)
      assert.match(result.stderr, new RegExp(`insecure must be true or false, got "${value}"`))
    }
  })

  test('a certificate for another host, reached by IP address: the error lists the names it is for', async (t) => {
    const port = Number(process.env.BQ_REDIS_TLS_PORT ?? 7201) + 3
    if (!(await requireBroker(t, 'Redis over TLS (wrong host)', '127.0.0.1', port))) return
    const {testCerts} = await import('../support/certs.js')
    const ca = testCerts().ca
    const result = await runBq(['peek', 'q', '-b', `rediss://127.0.0.1:${port}/0?ca=${encodeURIComponent(ca)}`], {env})
    assert.equal(result.code, 4, result.stderr)
    assert.match(result.stderr, /not for the name connected to \(it lists DNS:wrong-host\.invalid\): connect by a name it lists, or pass servername=NAME/)
  })
})
