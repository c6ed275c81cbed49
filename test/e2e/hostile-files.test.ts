/**
 * Every file bq reads that the user names, fed hostile files through bin/run.js: /dev/zero, a FIFO
 * nobody writes to, a directory, a (sparse) file above the reader's cap, an empty file and a
 * binary one. Each run must end within 5 s (about 0.2–0.7 s on an idle machine; the bound leaves
 * room for CI running three files at once, and an unbounded read or a blocked open takes far
 * longer: before the bounded reader these ran 20–30 s until killed) with the right exit code (2 for a refusal; an empty or
 * binary file gets its own clear error) and one line on stderr (replay: its summary, then one),
 * never a hang, a stack trace or a change to the store. Only the embedded store is used; the TLS cases are refused while the broker
 * URL is read, so no broker is ever contacted.
 */
import {after, before, describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {execFileSync} from 'node:child_process'
import {mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, truncateSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {hasStackTrace, runBq, type CliResult} from '../support/cli.js'
import {repoRoot} from '../support/conformance.js'
import {storeDepth} from '../support/embedded-store.js'

const MiB = 1024 * 1024
const exampleLines = readFileSync(path.join(repoRoot, 'examples', 'orders.dlq.jsonl'), 'utf8').trim().split('\n')
const exampleRegistry = path.join(repoRoot, 'examples', 'registry.json')
const FIRST = '4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa001'

type Hostile = 'dev-zero' | 'fifo' | 'directory' | 'above the cap' | 'empty' | 'binary'
const HOSTILE: Hostile[] = ['dev-zero', 'fifo', 'directory', 'above the cap', 'empty', 'binary']

let dir: string
let sqliteUrl: string
let env: NodeJS.ProcessEnv
let serial = 0

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-hostile-files-'))
  sqliteUrl = `sqlite://${path.join(dir, 'x.db')}`
  env = {XDG_DATA_HOME: dir, BQ_BROKER: '', VISUAL: '', BQ_LEDGER: path.join(dir, 'ledger.db')}
})
after(() => rmSync(dir, {recursive: true, force: true}))

/** A fresh folder for one case. */
function folder(): string {
  const made = path.join(dir, `case-${++serial}`)
  mkdirSync(made)
  return made
}

/**
 * Makes `file` hostile. /dev/zero is reached through a symlink so that readers that take a name
 * inside a folder (a registry's schema, contexts.json) meet it too. `cap` is the reader's cap.
 */
function makeHostile(file: string, kind: Hostile, cap: number): string {
  switch (kind) {
    case 'dev-zero':
      symlinkSync('/dev/zero', file)
      break
    case 'fifo':
      execFileSync('mkfifo', [file])
      break
    case 'directory':
      mkdirSync(file)
      break
    case 'above the cap':
      writeFileSync(file, '')
      truncateSync(file, cap + MiB)
      break
    case 'empty':
      writeFileSync(file, '')
      break
    case 'binary':
      writeFileSync(file, Buffer.from([0x00, 0xff, 0xfe, 0x80, 0x1b, 0x5b, 0x32, 0x4a, 0xc3, 0x28, 0x0d, 0x07, 0x00, 0x9f]))
      break
  }
  return file
}

/**
 * Runs bq with a 15 s timeout (a hang fails instead of blocking the suite) and checks the shape of a
 * refusal: one line on stderr (`lines`: replay's summary line comes before its error), the last
 * one matching `pattern`.
 */
async function expectOneLine(args: string[], code: number, pattern: RegExp, extraEnv: NodeJS.ProcessEnv = {}, count = 1): Promise<CliResult> {
  const started = Date.now()
  const result = await runBq(args, {env: {...env, ...extraEnv}, timeoutMs: 15_000})
  const elapsed = Date.now() - started
  const what = `bq ${args.join(' ')} → ${result.code}\n${result.stderr}${result.stdout}`
  assert.ok(elapsed < 5000, `took ${elapsed} ms: ${what}`)
  assert.equal(result.code, code, what)
  assert.ok(!hasStackTrace(result.stderr), what)
  const lines = result.stderr.split('\n').filter((line) => line.trim() !== '')
  assert.equal(lines.length, count, what)
  assert.match(lines.at(-1)!, pattern, what)
  return result
}

/** The refusal each hostile file gets from a reader that reads files whole. */
function refusal(kind: Hostile, invalid: RegExp): RegExp {
  switch (kind) {
    case 'dev-zero':
      return /character device, not a regular file/
    case 'fifo':
      return /FIFO \(named pipe\), not a regular file/
    case 'directory':
      return /it is a directory/
    case 'above the cap':
      return /above the \d+ MiB cap for a/
    default:
      return invalid
  }
}

/** How many messages a queue of the embedded store holds (read directly: test/support/embedded-store.ts). */
const depth = (queue: string): Promise<number> => storeDepth(sqliteUrl, queue)

const envelopeFile = () => {
  const file = path.join(dir, 'one.json')
  writeFileSync(file, exampleLines[0]!)
  return file
}

describe('registries and their schemas', () => {
  for (const kind of HOSTILE) {
    test(`validate --registry: ${kind}`, async () => {
      const file = makeHostile(path.join(folder(), 'registry.json'), kind, 64 * MiB)
      await expectOneLine(['validate', envelopeFile(), '--registry', file], 2, refusal(kind, /registry .* is not valid JSON/))
    })
    test(`schema check --registry: ${kind}`, async () => {
      const file = makeHostile(path.join(folder(), 'registry.json'), kind, 64 * MiB)
      await expectOneLine(['schema', 'check', '--registry', file], 2, refusal(kind, /registry .* is not valid JSON/))
    })
    test(`a schema file a registry names (validate): ${kind}`, async () => {
      const home = folder()
      makeHostile(path.join(home, 'schema.json'), kind, 16 * MiB)
      const registry = path.join(home, 'registry.json')
      writeFileSync(registry, JSON.stringify({schemas: [{urn: 'urn:babel:orders:created', schema: 'schema.json'}]}))
      await expectOneLine(['validate', envelopeFile(), '--registry', registry], 2, refusal(kind, /schema for urn:babel:orders:created .* is not valid JSON/))
    })
  }
})

describe('schema compat inputs', () => {
  for (const kind of HOSTILE) {
    test(`schema compat OLD: ${kind}`, async () => {
      const home = folder()
      const old = makeHostile(path.join(home, 'old.json'), kind, 16 * MiB)
      const next = path.join(home, 'new.json')
      writeFileSync(next, '{"type":"object"}')
      await expectOneLine(['schema', 'compat', old, next], 2, refusal(kind, /old schema .* is not valid JSON/))
    })
  }
})

describe('schema gdpr --mask', () => {
  for (const kind of HOSTILE) {
    test(`--mask: ${kind}`, async () => {
      const file = makeHostile(path.join(folder(), 'message.json'), kind, 16 * MiB)
      await expectOneLine(['schema', 'gdpr', '--registry', exampleRegistry, '--mask', file], 2, refusal(kind, /--mask .*(expected one JSON envelope)/))
    })
  }
})

describe('broker URL TLS files (refused before any connection)', () => {
  for (const parameter of ['ca', 'cert', 'key'] as const) {
    for (const kind of HOSTILE) {
      test(`${parameter}=: ${kind}`, async () => {
        const home = folder()
        const file = makeHostile(path.join(home, `${parameter}.pem`), kind, MiB)
        // cert= needs key= (and the other way round): the partner is a harmless placeholder, read after.
        const partner = path.join(home, 'partner.pem')
        writeFileSync(partner, '-----BEGIN PLACEHOLDER-----\n')
        const query = parameter === 'ca' ? `ca=${file}` : parameter === 'cert' ? `cert=${file}&key=${partner}` : `cert=${partner}&key=${file}`
        const url = `rediss://127.0.0.1:6379?${query}`
        const pattern = parameter === 'key' && kind !== 'empty' && kind !== 'binary' ? refusal(kind, /x/) : refusal(kind, /is not a PEM file|cannot be used for TLS/)
        await expectOneLine(['peek', 'orders', '-b', url], 2, pattern)
      })
    }
  }
})

describe('the contexts file', () => {
  for (const kind of HOSTILE) {
    test(`contexts.json: ${kind}`, async () => {
      const config = folder()
      mkdirSync(path.join(config, 'bq'))
      makeHostile(path.join(config, 'bq', 'contexts.json'), kind, MiB)
      await expectOneLine(['context', 'list'], 2, refusal(kind, /contexts\.json is not valid JSON/), {XDG_CONFIG_HOME: config})
    })
  }
})

describe('on the embedded store: nothing changes', () => {
  let seeded = false
  async function seed(): Promise<void> {
    if (seeded) return
    const file = path.join(dir, 'seed.jsonl')
    writeFileSync(file, exampleLines.join('\n') + '\n')
    const result = await runBq(['replay', file, '--as-is', '--to', 'orders.dlq', '--yes', '-b', sqliteUrl], {env})
    assert.equal(result.code, 0, result.stderr)
    seeded = true
  }

  for (const kind of HOSTILE) {
    test(`dlq redrive --patch --dry-run: ${kind}`, async () => {
      await seed()
      const before = [await depth('orders.dlq'), await depth('orders')]
      const patch = makeHostile(path.join(folder(), 'patch.json'), kind, MiB)
      await expectOneLine(['dlq', 'redrive', 'orders', '--patch', patch, '--dry-run', '-b', sqliteUrl], 2, refusal(kind, /--patch .*(not valid JSON|JSON Patch|empty)/i))
      assert.deepEqual([await depth('orders.dlq'), await depth('orders')], before)
    })

    test(`dlq edit, the buffer replaced by the editor: ${kind}`, async () => {
      await seed()
      const before = [await depth('orders.dlq'), await depth('orders')]
      const script = path.join(folder(), 'editor.sh')
      const make: Record<Hostile, string> = {
        'dev-zero': 'rm -f "$1"; ln -s /dev/zero "$1"',
        fifo: 'rm -f "$1"; mkfifo "$1"',
        directory: 'rm -f "$1"; mkdir "$1"',
        'above the cap': 'truncate -s 17M "$1"',
        empty: ': > "$1"',
        binary: "printf '\\000\\377\\033[2J\\303(' > \"$1\"",
      }
      writeFileSync(script, `${make[kind]}\n`)
      const pattern = refusal(kind, kind === 'empty' ? /edit aborted: the file was emptied/ : /not valid JSON|not JSON/)
      await expectOneLine(['dlq', 'edit', 'orders', '--id', FIRST, '--dry-run', '-b', sqliteUrl], 2, pattern, {EDITOR: `sh ${script}`})
      assert.deepEqual([await depth('orders.dlq'), await depth('orders')], before)
    })

    test(`replay FILE: ${kind}`, async () => {
      await seed()
      const before = [await depth('orders.dlq'), await depth('orders')]
      const input = makeHostile(path.join(folder(), 'backup.jsonl'), kind, 16 * MiB)
      // Streamed inputs have no whole-file cap: a file of zeros, an empty or binary file is all poison (exit 1).
      const streamed = kind === 'above the cap' || kind === 'empty' || kind === 'binary'
      const args = ['replay', input, '--to', 'orders', '--yes', '-b', sqliteUrl]
      if (streamed) await expectOneLine(args, 1, /nothing was published: the only message read from .* was poison/, {}, 2)
      else await expectOneLine(args, 2, refusal(kind, /x/))
      assert.deepEqual([await depth('orders.dlq'), await depth('orders')], before)
    })
  }
})
