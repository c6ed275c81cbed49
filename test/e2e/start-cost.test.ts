/**
 * bq starts from one bundled module (dist/bq.js) and loads a package only when a command needs
 * it: `bq --help` and `bq validate one.json` load no broker SDK, ajv, inquirer or cli-table3, and
 * the packages appear once a command asks for them. Every import is recorded by a resolve hook;
 * a package bundled into a chunk counts as loaded when that chunk is (dist/bundle-packages.json).
 */
import {after, before, describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, readFileSync, readdirSync, rmSync, existsSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {runBq} from '../support/cli.js'
import {fixturePath, registryExamplesDir, repoRoot} from '../support/conformance.js'

const lazyPackages = ['ioredis', 'amqplib', 'kafkajs', 'better-sqlite3', '@aws-sdk', 'rhea', '@azure', 'ajv', 'inquirer', 'cli-table3']
const hook = path.join(repoRoot, 'test', 'support', 'record-imports.mjs')
let dir: string
/** scripts/bundle.js writes which packages each dist file bundles. */
const packagesByChunk: Record<string, string[]> = JSON.parse(readFileSync(path.join(repoRoot, 'dist', 'bundle-packages.json'), 'utf8'))

before(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'bq-start-cost-'))
})
after(() => rmSync(dir, {recursive: true, force: true}))

/** Runs bq and returns the packages it imported from node_modules, and its bq modules. */
async function importsOf(args: string[], name: string): Promise<{packages: Set<string>; bqModules: string[]; code: number}> {
  const record = path.join(dir, `${name}.txt`)
  const result = await runBq(args, {env: {NODE_OPTIONS: `--import=${hook}`, BQ_RECORD_IMPORTS: record, BQ_BROKER: `sqlite://${path.join(dir, 'store.db')}`}})
  const urls = existsSync(record) ? readFileSync(record, 'utf8').trim().split('\n') : []
  const bqModules = urls.filter((url) => url.startsWith('file:') && url.includes('/dist/') && !url.includes('node_modules'))
  // A package is loaded when it is imported from node_modules, or when a chunk that bundles it is.
  const fromNodeModules = urls.flatMap((url) => url.match(/node_modules\/((@[^/]+\/)?[^/]+)/)?.[1] ?? [])
  const bundled = bqModules.flatMap((url) => packagesByChunk[path.relative(repoRoot, new URL(url).pathname)] ?? [])
  const packages = new Set([...fromNodeModules, ...bundled])
  return {packages, bqModules, code: result.code}
}

const lazyIn = (packages: Set<string>) => lazyPackages.filter((name) => [...packages].some((loaded) => loaded === name || loaded.startsWith(`${name}/`)))

describe('the bundled start', () => {
  test('bq --help loads no lazy package, and bq from the bundle alone', async () => {
    const run = await importsOf(['--help'], 'help')
    assert.equal(run.code, 0)
    assert.deepEqual(lazyIn(run.packages), [])
    assert.ok(run.bqModules.some((url) => url.endsWith('/dist/bq.js')), 'bin/run.js imports dist/bq.js')
    assert.ok(!run.bqModules.some((url) => url.includes('/dist/commands/')), 'no command is imported from its own file')
  })

  test('bq validate one.json loads no lazy package; --registry loads ajv', async () => {
    const plain = await importsOf(['validate', fixturePath('fixtures/order-created.json')], 'validate')
    assert.equal(plain.code, 0)
    assert.deepEqual(lazyIn(plain.packages), [])
    const registry = path.join(registryExamplesDir, 'registry.json')
    const withRegistry = await importsOf(['validate', fixturePath('fixtures/order-created.json'), '--registry', registry], 'validate-registry')
    assert.equal(withRegistry.code, 1, 'the fixture lacks data.amount, which the example schema requires')
    assert.deepEqual(lazyIn(withRegistry.packages), ['ajv'])
  })

  test('a command loads its own module and no other command\'s; the CEL library only for --where', async () => {
    // esbuild names each lazily imported module's chunk after its file: dist/chunks/<name>-<hash>.js.
    // Only the chunks named after a command file (or where.ts) are looked at; oclif has its own.
    const commandNames = new Set(readdirSync(path.join(repoRoot, 'src', 'commands'), {recursive: true, encoding: 'utf8'}).filter((file) => file.endsWith('.ts')).map((file) => path.basename(file, '.ts')))
    const chunks = (run: {bqModules: string[]}) =>
      run.bqModules.flatMap((url) => url.match(/\/dist\/chunks\/([a-z_-]+?)-[A-Z0-9]+\.js$/)?.[1] ?? []).filter((name) => commandNames.has(name) || name === 'where')
    const help = await importsOf(['--help'], 'help-chunks')
    assert.deepEqual(chunks(help), [])
    const validate = await importsOf(['validate', fixturePath('fixtures/order-created.json')], 'validate-chunks')
    assert.deepEqual(chunks(validate), ['validate'])
    const file = fixturePath('fixtures/order-created.json')
    const replay = await importsOf(['replay', file, '--dry-run', '--to', 'orders'], 'replay-chunks')
    assert.equal(replay.code, 0)
    assert.ok(!chunks(replay).includes('where'), chunks(replay).join(' '))
    const where = await importsOf(['replay', file, '--dry-run', '--to', 'orders', '--where', 'attempts == 0'], 'replay-where-chunks')
    assert.equal(where.code, 0)
    assert.ok(chunks(where).includes('where'), chunks(where).join(' '))
  })

  test('a command on the embedded store loads its SDK and no other broker\'s', async () => {
    const run = await importsOf(['peek', 'start-cost-queue', '--json'], 'peek')
    assert.equal(run.code, 0)
    assert.deepEqual(lazyIn(run.packages), ['better-sqlite3'])
  })
})
