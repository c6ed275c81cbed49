/**
 * The oclif conventions bq follows: a typo gets a suggestion and exit 2 (no prompt off a
 * terminal), `bq help [command]`, `--help` on every command and `-h` as its alias, `bq version`
 * / `--version`, and shell completion scripts that name bq's commands.
 */
import {after, before, describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {existsSync, mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {pathToFileURL} from 'node:url'

import {hasStackTrace, runBq} from '../support/cli.js'
import {repoRoot} from '../support/conformance.js'

const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {version: string; oclif: {additionalHelpFlags?: string[]}}
const manifest = JSON.parse(readFileSync(path.join(repoRoot, 'oclif.manifest.json'), 'utf8')) as {commands: Record<string, {aliases?: string[]; flags?: Record<string, {char?: string}>}>}
/** bq's own commands and their aliases (the manifest), and the plugins' commands. */
const allCommands = [...Object.entries(manifest.commands).flatMap(([id, command]) => [id, ...(command.aliases ?? [])]), 'help', 'version', 'autocomplete']
let dir: string
let env: NodeJS.ProcessEnv

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-conventions-'))
  env = {XDG_CACHE_HOME: path.join(dir, 'cache'), XDG_DATA_HOME: path.join(dir, 'data'), BQ_BROKER: ''}
})
after(() => rmSync(dir, {recursive: true, force: true}))

const bq = (args: string[]) => runBq(args, {env, timeoutMs: 30_000})

/**
 * What `bq ARGS` prints on stdout and stderr, and the exit code it leaves set, run by the bundle's
 * execute in this process with the tests' environment. A failure inside oclif ends this process
 * with the error, which fails the file.
 */
async function helpInProcess(args: string[]): Promise<{stdout: string; stderr: string; exitCode: number | string | undefined}> {
  const {execute} = (await import(pathToFileURL(path.join(repoRoot, 'dist', 'bq.js')).href)) as {execute: (options: {args: string[]; dir: string}) => Promise<unknown>}
  const saved = {env: {...process.env}, stdout: process.stdout.write, stderr: process.stderr.write, exitCode: process.exitCode}
  Object.assign(process.env, env, {OCLIF_DISABLE_ENGINE_WARNING: '1'})
  const printed = {stdout: '', stderr: ''}
  const capture = (stream: 'stdout' | 'stderr') =>
    ((chunk: string | Uint8Array) => {
      printed[stream] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8')
      return true
    }) as typeof process.stdout.write
  process.stdout.write = capture('stdout')
  process.stderr.write = capture('stderr')
  try {
    await execute({args, dir: pathToFileURL(path.join(repoRoot, 'bin', 'run.js')).href})
    return {...printed, exitCode: process.exitCode}
  } finally {
    process.stdout.write = saved.stdout
    process.stderr.write = saved.stderr
    process.exitCode = saved.exitCode
    for (const key of Object.keys(process.env)) if (!(key in saved.env)) delete process.env[key]
    Object.assign(process.env, saved.env)
  }
}

describe('a mistyped command', () => {
  test('bq peak suggests peek, exits 2, and does not prompt off a terminal', async () => {
    const run = await bq(['peak', 'orders'])
    assert.equal(run.code, 2, run.stderr)
    assert.match(run.stderr, /^Error: "peak" is not a bq command; did you mean bq peek\? \(bq help lists them\)\n$/)
    assert.doesNotMatch(run.stderr + run.stdout, /\(Y\/n\)|Did you mean/)
    assert.equal(run.stdout, '')
  })

  test('a topic command (dlq redrve) suggests dlq redrive; nonsense gets no guess', async () => {
    assert.match((await bq(['dlq', 'redrve'])).stderr, /did you mean bq dlq redrive\?/)
    const nonsense = await bq(['xyzzyplugh'])
    assert.equal(nonsense.code, 2)
    assert.match(nonsense.stderr, /^Error: "xyzzyplugh" is not a bq command \(bq help lists them\)/)
  })
})

describe('help', () => {
  test('bq --help and bq help list every top-level command and topic', async () => {
    for (const args of [['--help'], ['help']]) {
      const run = await bq(args)
      assert.equal(run.code, 0, run.stderr)
      for (const name of ['publish', 'peek', 'replay', 'validate', 'redrive', 'inspect-dlq', 'help', 'version', 'autocomplete', 'dlq', 'context']) {
        assert.match(run.stdout, new RegExp(`^\\s+${name}\\s`, 'm'), `${name} in ${args.join(' ')}`)
      }
    }
    const topics = await bq(['help', 'dlq'])
    for (const id of ['dlq inspect', 'dlq redrive', 'dlq recover', 'dlq edit', 'dlq triage']) assert.match(topics.stdout, new RegExp(id))
    const context = await bq(['help', 'context'])
    for (const id of ['add', 'list', 'use', 'show', 'remove']) assert.match(context.stdout, new RegExp(`context ${id}`))
  })

  test('bq help peek, bq help dlq redrive', async () => {
    const peek = await bq(['help', 'peek'])
    assert.equal(peek.code, 0)
    assert.match(peek.stdout, /\$ bq peek QUEUE/)
    const redrive = await bq(['help', 'dlq', 'redrive'])
    assert.equal(redrive.code, 0)
    assert.match(redrive.stdout, /\$ bq dlq redrive QUEUE/)
    assert.match(redrive.stdout, /--context=<value>/)
  })

  // Every command's help through oclif's execute, the function bin/run.js calls, from the same
  // bundle, in this process: a start of bq per command (0.1-0.15 CPU s) costs more than the
  // check, and the start is the same for every command; bin/run.js runs --help and -h in the
  // next test, on a command of each kind.
  test('--help works on every command', async () => {
    assert.ok(allCommands.length >= 19, allCommands.join(' '))
    for (const id of allCommands) {
      const words = id.split(':')
      const printed = await helpInProcess([...words, '--help'])
      assert.equal(printed.exitCode, undefined, `${id} --help set exit code ${printed.exitCode}: ${printed.stderr}`)
      assert.ok(!hasStackTrace(printed.stderr), printed.stderr)
      // `bq help --help` is the root help; every other command shows its own usage.
      assert.match(printed.stdout, id === 'help' ? /^USAGE\n {2}\$ bq \[COMMAND\]/m : new RegExp(`\\$ bq ${words.join(' ')}\\b`), `${id} --help`)
    }
  })

  // oclif checks the arguments for its help flags (`--help` plus package.json's
  // additionalHelpFlags) before it looks the command up, so -h takes the same path as --help on
  // every command. What can break that is checked here: -h no longer listed, a command claiming
  // -h for a flag of its own (its users would get help instead), and -h printing anything else
  // than --help on commands of each kind (top-level, topic, alias, plugin).
  test('-h is --help on every command', async () => {
    assert.deepEqual(pkg.oclif.additionalHelpFlags, ['-h'])
    const claimed = Object.entries(manifest.commands).flatMap(([id, command]) => Object.entries(command.flags ?? {}).filter(([, flag]) => flag.char === 'h').map(([name]) => `${id} --${name}`))
    assert.deepEqual(claimed, [])
    const aliased = Object.entries(manifest.commands).find(([, command]) => (command.aliases ?? []).length > 0)
    assert.ok(aliased, 'a command with an alias')
    for (const id of ['peek', 'dlq:redrive', aliased[1].aliases![0], 'version', 'help']) {
      const words = id.split(':')
      const [short, long] = await Promise.all([bq([...words, '-h']), bq([...words, '--help'])])
      assert.equal(short.code, 0, `${id} -h: ${short.stderr}`)
      assert.equal(short.stdout, long.stdout, `${id}: -h and --help differ`)
      assert.equal(short.stderr, long.stderr, `${id}: -h and --help differ on stderr`)
    }
  })
})

describe('version', () => {
  test('bq version and bq --version print bq/<version>', async () => {
    for (const args of [['version'], ['--version']]) {
      const run = await bq(args)
      assert.equal(run.code, 0, run.stderr)
      assert.match(run.stdout, new RegExp(`^bq/${pkg.version.replaceAll('.', '\\.')} `))
    }
  })
})

describe('shell completion', () => {
  test('bq autocomplete bash|zsh prints set-up steps and writes scripts naming bq commands and flags', async () => {
    for (const shell of ['bash', 'zsh']) {
      const run = await bq(['autocomplete', shell])
      assert.equal(run.code, 0, run.stderr)
      assert.match(run.stdout, new RegExp(`bq autocomplete script ${shell}`))
    }
    const base = path.join(dir, 'cache', 'bq', 'autocomplete')
    const bash = readFileSync(path.join(base, 'functions', 'bash', 'bq.bash'), 'utf8')
    for (const line of [/^dlq:redrive .*--context/m, /^peek .*--broker/m, /^context:add /m]) assert.match(bash, line)
    const zsh = readFileSync(path.join(base, 'functions', 'zsh', '_bq'), 'utf8')
    assert.match(zsh, /redrive/)
    assert.ok(existsSync(path.join(base, 'bash_setup')))
    const script = await bq(['autocomplete', 'script', 'bash'])
    assert.match(script.stdout, /bash_setup/)
  })
})
