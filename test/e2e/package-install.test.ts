// @test-uses npm-registry
/**
 * bq as users install it: `npm pack` makes the tarball, `npm install -g --prefix <tmp>` installs it
 * on an empty prefix (dependencies from npm's cache, else the registry: `--prefer-offline`), and
 * the installed `bq` works from a folder that is not the clone: --version, validate (the examples
 * ship in the package), and publish then peek on the embedded store. Also: what `npm pack` would
 * ship holds no test, bench, script, CI or secret file, and does hold the docs/ the README links to.
 *
 * Speed: better-sqlite3's install script looks for a prebuilt binary before it compiles one
 * (several minutes on 2 cores). The test hands it the clone's own compiled binary as a local
 * prebuild (prebuild-install's `<package>_local_prebuilds`), so what is timed is the packaging
 * and the install, not a C++ build. Without a binary for this Node it compiles, as a user's
 * install would.
 */
import {after, before, describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {spawnSync} from 'node:child_process'
import type {SpawnSyncReturns} from 'node:child_process'
import {existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {repoRoot} from '../support/conformance.js'

const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as {name: string; version: string}
let dir: string
/**
 * The environment npm and bq run in: the parent's, minus the variables an npm run sets for its
 * script (`npm test` sets many), keeping where npm's cache, registry and proxies are.
 */
let cleanEnv: NodeJS.ProcessEnv

function run(command: string, args: string[], options: {cwd: string; env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number}): SpawnSyncReturns<string> {
  const result = spawnSync(command, args, {
    cwd: options.cwd,
    env: options.env ?? cleanEnv,
    input: options.input,
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 60_000,
  })
  if (result.error) throw result.error
  return result
}

before(() => {
  for (const built of ['dist/bq.js', 'oclif.manifest.json']) {
    assert.ok(existsSync(path.join(repoRoot, built)), `${built} is missing: run npm run build first`)
  }
  dir = mkdtempSync(path.join(tmpdir(), 'bq-package-'))
  const kept = /^npm_config_(cache|registry|userconfig|globalconfig|proxy|https_proxy|noproxy|cafile|strict_ssl)$/i
  cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key) || kept.test(key)))
})
after(() => rmSync(dir, {recursive: true, force: true}))

describe('the npm package', () => {
  test('ships no test, bench, script, CI or secret file, and every file bq needs to run', () => {
    const result = run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {cwd: repoRoot})
    assert.equal(result.status, 0, result.stderr)
    const [report] = JSON.parse(result.stdout) as [{files: {path: string}[]}]
    const files = report.files.map((file) => file.path)
    const forbidden = files.filter((file) =>
      /^(test|bench|scripts|\.ci|src|node_modules|\.bq-test|\.github)\//.test(file) ||
      /(^|\/)\.(env|npmrc)/.test(file) ||
      /\.(pem|key|crt|p12|jks|keystore)$/.test(file) ||
      /\.test\.[jt]s$/.test(file) ||
      /(^|\/)(tsconfig[^/]*\.json|eslint\.config\.js|package-lock\.json)$/.test(file),
    )
    assert.deepEqual(forbidden, [], `files that must not ship: ${forbidden.join(', ')}`)
    for (const needed of ['package.json', 'README.md', 'bin/run.js', 'dist/bq.js', 'oclif.manifest.json', 'examples/registry.json', 'examples/orders.dlq.jsonl', 'docs/brokers.md', 'docs/commands/README.md']) {
      assert.ok(files.includes(needed), `${needed} ships`)
    }
    assert.ok(files.some((file) => file.startsWith('dist/chunks/')), 'the lazily loaded chunks ship')
  })

  test('npm pack, then npm install -g into an empty prefix: bq works from any folder', {timeout: 15 * 60_000}, () => {
    const started = Date.now()
    const packed = run('npm', ['pack', '--json', '--pack-destination', dir], {cwd: repoRoot})
    assert.equal(packed.status, 0, packed.stderr)
    const [{filename}] = JSON.parse(packed.stdout) as [{filename: string}]
    const tarball = path.join(dir, filename)
    assert.ok(existsSync(tarball), `${tarball} written`)

    // The clone's compiled better-sqlite3, laid out as prebuild-install names and unpacks a prebuild.
    const installEnv: NodeJS.ProcessEnv = {...cleanEnv}
    const sqliteDir = path.join(repoRoot, 'node_modules', 'better-sqlite3')
    const binary = path.join(sqliteDir, 'build', 'Release', 'better_sqlite3.node')
    if (existsSync(binary)) {
      const sqliteVersion = (JSON.parse(readFileSync(path.join(sqliteDir, 'package.json'), 'utf8')) as {version: string}).version
      const prebuilds = path.join(dir, 'prebuilds')
      const staging = path.join(dir, 'prebuild-staging')
      mkdirSync(path.join(staging, 'build', 'Release'), {recursive: true})
      writeFileSync(path.join(staging, 'build', 'Release', 'better_sqlite3.node'), readFileSync(binary))
      mkdirSync(prebuilds)
      const name = `better-sqlite3-v${sqliteVersion}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`
      const tar = run('tar', ['-czf', path.join(prebuilds, name), '-C', staging, 'build/Release/better_sqlite3.node'], {cwd: dir})
      assert.equal(tar.status, 0, tar.stderr)
      installEnv.npm_config_better_sqlite3_local_prebuilds = prebuilds
    }

    const prefix = path.join(dir, 'prefix')
    const install = run('npm', ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', '--loglevel', 'error', tarball], {
      cwd: dir,
      env: installEnv,
      timeoutMs: 14 * 60_000,
    })
    assert.equal(install.status, 0, `${install.stdout}\n${install.stderr}`)
    const installSeconds = (Date.now() - started) / 1000

    const installed = path.join(prefix, 'lib', 'node_modules', pkg.name)
    assert.deepEqual(readdirSync(installed).filter((entry) => ['test', 'bench', 'scripts', 'src', '.ci'].includes(entry)), [])

    // Somewhere that is not the clone, with a store, a config and PATH of its own.
    const elsewhere = path.join(dir, 'elsewhere')
    mkdirSync(elsewhere)
    const env: NodeJS.ProcessEnv = {
      ...cleanEnv,
      PATH: `${path.join(prefix, 'bin')}${path.delimiter}${cleanEnv.PATH ?? ''}`,
      XDG_DATA_HOME: path.join(dir, 'data'),
      XDG_CONFIG_HOME: path.join(dir, 'config'),
      BQ_BROKER: '',
      BQ_CONTEXT: '',
      BQ_LEDGER: '',
    }
    const bq = (args: string[], input?: string) => run('bq', args, {cwd: elsewhere, env, input})

    const version = bq(['--version'])
    assert.equal(version.status, 0, version.stderr)
    assert.match(version.stdout, new RegExp(`^${pkg.name}/${pkg.version.replaceAll('.', '\\.')} `))

    const examples = path.join(installed, 'examples')
    const message = readFileSync(path.join(examples, 'orders.dlq.jsonl'), 'utf8').split('\n')[0]
    const valid = bq(['validate', '-', '--registry', path.join(examples, 'registry.json')], message)
    assert.equal(valid.status, 0, `${valid.stdout}\n${valid.stderr}`)
    const invalid = bq(['validate', path.join(examples, 'orders.dlq.jsonl'), '--registry', path.join(examples, 'registry.json'), '--json'])
    assert.equal(invalid.status, 1, invalid.stderr)
    assert.equal((JSON.parse(invalid.stdout) as {result: {summary: {invalid: number}}}).result.summary.invalid, 1)

    const published = bq(['publish', 'urn:babel:orders:created', '-d', '{"order_id":9007199254740993,"amount_cents":99.90}', '-q', 'orders', '--json'])
    assert.equal(published.status, 0, published.stderr)
    const [id] = (JSON.parse(published.stdout) as {result: {ids: string[]}}).result.ids
    const peeked = bq(['peek', 'orders', '--raw'])
    assert.equal(peeked.status, 0, peeked.stderr)
    assert.match(peeked.stdout, new RegExp(id))
    assert.match(peeked.stdout, /"order_id":9007199254740993,"amount_cents":99\.90/)
    assert.ok(existsSync(path.join(dir, 'data', 'bq', 'queues.db')), 'the embedded store is the default, under XDG_DATA_HOME')
    const compiled = existsSync(path.join(installed, 'node_modules', 'better-sqlite3', 'build', 'Makefile'))
    console.log(`pack + install took ${installSeconds.toFixed(1)} s (better-sqlite3 ${compiled ? 'compiled' : 'from the local prebuild'}); the whole test ${((Date.now() - started) / 1000).toFixed(1)} s`)
  })
})
