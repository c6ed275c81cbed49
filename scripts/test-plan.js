// Which test files exist, their layer, which brokers they hold while they run, and the order
// scripts/run-tests.js starts them in.
//
// - A file under test/brokers/<broker>/ holds that broker (the embedded store, sqlite, is no
//   broker); `*.unit.test.ts` files hold none. Any file may add brokers with a line
//   `// @test-uses redis rabbitmq` in its first lines (or another shared thing: the package test
//   holds `npm-registry`, which also keeps it out of the quick set; the files that start, kill and
//   restart JVM brokers of their own hold `private-jvm` instead of their folder's shared broker, so
//   one such start runs at a time beside the other brokers' files). Text
//   after a colon on that line is the reason, not a resource. Two files holding the same broker never
//   overlap: their queues are unique, but listings (dlq ls, inflight ls) and broker-wide settings
//   are not.
// - `// @test-alone <why>` runs a file with nothing beside it, for a property that timing on a
//   busy machine would blur (no file needs it now).
// - Alone files go first (they are the floor of the run's time either way), then the rest by the
//   expected time in test/file-times.tsv, longest first, so the long ones do not end the run alone.
import {readdirSync, readFileSync, statSync} from 'node:fs'
import {basename, join, sep} from 'node:path'

export const allLayers = ['unit', 'conformance', 'integration', 'e2e', 'reliability']

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

/** The directives in a file's first lines. */
function directives(path) {
  const head = readFileSync(path, 'utf8').split('\n').slice(0, 40)
  const uses = []
  let alone = false
  for (const line of head) {
    const usesMatch = /^\s*\/\/\s*@test-uses\s+([^:]+)/.exec(line)
    if (usesMatch) uses.push(...usesMatch[1].trim().split(/[\s,]+/))
    if (/^\s*\/\/\s*@test-alone\b/.test(line)) alone = true
  }
  return {uses, alone}
}

/** Each file's wall and CPU seconds when it ran alone (test/file-times.tsv). */
function expectedTimes() {
  const times = new Map()
  try {
    for (const line of readFileSync(join('test', 'file-times.tsv'), 'utf8').split('\n')) {
      const [path, wall, cpu] = line.split('\t')
      if (path && !path.startsWith('#') && Number.isFinite(Number(wall))) times.set(path, {wall: Number(wall), cpu: cpu ? Number(cpu) : Number(wall)})
    }
  } catch {
    // no expectations yet: plan order only
  }
  return times
}

function describe(path, layer) {
  const parts = path.split(sep)
  const {uses, alone} = directives(path)
  const resources = new Set(uses)
  // A private-jvm file runs its broker on ports and a home of its own: the shared one stays free.
  if (parts[1] === 'brokers' && layer !== 'unit' && parts[2] !== 'sqlite' && !resources.has('private-jvm')) resources.add(parts[2])
  return {path, layer, resources: [...resources].sort(), alone}
}

/**
 * The files of these layers in the order to start them. `quick` keeps the unit, conformance and
 * end-to-end files that hold nothing and are not alone; `only` keeps paths containing one of its strings; `brokers` keeps files of
 * one of those brokers.
 */
export function planFiles(layers, {quick = false, only = [], brokers = []} = {}) {
  const brokerTests = testFiles(join('test', 'brokers'))
  let files = layers.flatMap((layer) => [
    ...testFiles(join('test', layer)).map((path) => describe(path, layer)),
    ...brokerTests.filter((path) => brokerLayer(path) === layer).map((path) => describe(path, layer)),
  ])
  if (quick) files = files.filter((file) => file.resources.length === 0 && !file.alone && ['unit', 'conformance', 'e2e'].includes(file.layer))
  if (only.length > 0) files = files.filter((file) => only.some((s) => file.path.includes(s)))
  if (brokers.length > 0) {
    files = files.filter((file) => brokers.some((b) => file.resources.includes(b) || file.path.startsWith(join('test', 'brokers', b) + sep)))
  }
  const times = expectedTimes()
  for (const file of files) {
    file.expected = times.get(file.path)?.wall ?? 30
    file.expectedCpu = times.get(file.path)?.cpu ?? 10
  }
  return files.sort((a, b) => Number(b.alone) - Number(a.alone) || b.expected - a.expected)
}
