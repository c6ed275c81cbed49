/** The purge backup file: its default name, exclusive creation, appended lines. */
import {after, describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {BqError} from '../../src/lib/errors.js'
import {PurgeBackup, defaultBackupPath} from '../../src/lib/ops/purge-backup.js'

const dir = mkdtempSync(path.join(tmpdir(), 'bq-purge-backup-'))
after(() => rmSync(dir, {recursive: true, force: true}))

describe('purge backup', () => {
  test('the default path is ./<dlq>.purge-<UTC time>.jsonl, the queue name made safe for a file name', () => {
    const at = new Date('2025-06-05T14:12:10.123Z')
    assert.equal(defaultBackupPath('orders.dlq', at), './orders.dlq.purge-20250605T141210-123Z.jsonl')
    assert.equal(defaultBackupPath('persistent://public/default/orders.dlq', at), './persistent_public_default_orders.dlq.purge-20250605T141210-123Z.jsonl')
    assert.equal(defaultBackupPath('../etc', at), './__etc.purge-20250605T141210-123Z.jsonl')
  })

  test('creates the file exclusively, appends lines, and refuses an existing file without touching it', () => {
    const file = path.join(dir, 'a.jsonl')
    const backup = PurgeBackup.create(file)
    backup.append(['{"envelope":{"a":1},"headers":{}}'])
    backup.append([])
    backup.append(['{"envelope":{"b":2},"headers":{}}', '{"envelope":{"c":3},"headers":{}}'])
    assert.equal(backup.lines, 3)
    backup.close()
    backup.close()
    assert.equal(readFileSync(file, 'utf8').split('\n').length, 4)
    const existing = path.join(dir, 'b.jsonl')
    writeFileSync(existing, 'keep')
    assert.throws(() => PurgeBackup.create(existing), (error: unknown) => error instanceof BqError && error.code === 'backup-exists' && error.exitCode === 2)
    assert.equal(readFileSync(existing, 'utf8'), 'keep')
    assert.throws(() => PurgeBackup.create(path.join(dir, 'missing', 'c.jsonl')), (error: unknown) => error instanceof BqError && error.code === 'backup-unwritable')
  })
})
