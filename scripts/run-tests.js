#!/usr/bin/env node
// Runs the test layers with node's own test runner (TypeScript through tsx).
// Usage: node scripts/run-tests.js [layer ...]   layers: unit conformance integration e2e reliability
//
// Broker tests live together in test/brokers/<broker>/ and their file names say their layer:
// `*.unit.test.ts` unit, `commands.test.ts` e2e, `crash.test.ts` reliability, any other
// `*.test.ts` there (contract, adapter) integration. Shared tests sit in test/<layer>/.
import {spawnSync} from 'node:child_process'
import {readdirSync, statSync} from 'node:fs'
import {basename, join} from 'node:path'

const allLayers = ['unit', 'conformance', 'integration', 'e2e', 'reliability']
const layers = process.argv.slice(2).length > 0 ? process.argv.slice(2) : allLayers

function testFiles(dir) {
  let found = []
  let entries
  try {
    entries = readdirSync(dir)
  } catch {
    return found
  }
  for (const entry of entries.sort()) {
    const path = join(dir, entry)
    if (statSync(path).isDirectory()) found = found.concat(testFiles(path))
    else if (entry.endsWith('.test.ts')) found.push(path)
  }
  return found
}

/** The layer of a test file under test/brokers/, by its name. */
function brokerLayer(file) {
  const name = basename(file)
  if (name.endsWith('.unit.test.ts')) return 'unit'
  if (name === 'commands.test.ts') return 'e2e'
  if (name === 'crash.test.ts') return 'reliability'
  return 'integration'
}

const brokerTests = testFiles(join('test', 'brokers'))
const files = layers.flatMap((layer) => {
  if (!allLayers.includes(layer)) {
    console.error(`unknown test layer "${layer}" (known: ${allLayers.join(', ')})`)
    process.exit(2)
  }
  return [...testFiles(join('test', layer)), ...brokerTests.filter((file) => brokerLayer(file) === layer)]
})
if (files.length === 0) {
  console.error('no test files found')
  process.exit(1)
}
// One file at a time keeps broker tests from fighting over 2 cores and makes output readable.
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-reporter=spec', ...files],
  {stdio: 'inherit', env: process.env},
)
process.exit(result.status ?? 1)
