/**
 * oclif finds bq's commands through the commands index (src/commands/index.ts), not by scanning
 * folders: every command file must be listed there under its id, and nothing else.
 */
import assert from 'node:assert/strict'
import {readdirSync} from 'node:fs'
import path from 'node:path'
import {test} from 'node:test'

import {COMMANDS, PLUGIN_COMMANDS} from '../../src/commands/index.js'
import {repoRoot} from '../support/conformance.js'

test('the commands index lists every command file under its id, and oclif\'s plugin commands', () => {
  const commandsDir = path.join(repoRoot, 'src', 'commands')
  const ids = readdirSync(commandsDir, {recursive: true, encoding: 'utf8'})
    .filter((file) => file.endsWith('.ts') && file !== 'index.ts')
    .map((file) => file.replace(/\.ts$/, '').split(path.sep).join(':'))
  assert.deepEqual(Object.keys(COMMANDS).sort(), [...ids, ...Object.keys(PLUGIN_COMMANDS)].sort())
})

test('package.json points oclif at the index and the bundled hooks', async () => {
  const {default: pkg} = await import('../../package.json', {with: {type: 'json'}})
  assert.deepEqual(pkg.oclif.commands, {strategy: 'explicit', target: './dist/bq.js', identifier: 'COMMANDS'})
  assert.deepEqual(pkg.oclif.hooks.command_not_found, {target: './dist/bq.js', identifier: 'commandNotFound'})
})

test('every entry loads its command class only when asked, and the class runs', async () => {
  for (const [id, command] of Object.entries(COMMANDS)) {
    assert.equal(typeof command.run, 'function', id)
    const {default: loaded} = await (command as {load: () => Promise<{default: {run: unknown}}>}).load()
    assert.equal(typeof loaded.run, 'function', `${id} loads a command class`)
  }
})
