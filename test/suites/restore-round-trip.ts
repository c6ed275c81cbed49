/**
 * The middle of every restore round-trip test (test/brokers/<broker>/restore.test.ts): a DLQ
 * written by a plain client is purged with a backup (`bq dlq purge --backup`), then restored
 * with `bq replay --as-is`; the broker's test compares what its plain client reads before and
 * after, property by property.
 */
import assert from 'node:assert/strict'
import {mkdtempSync, readFileSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'

import {jsonResult, runBq} from '../support/cli.js'

export interface RoundTrip {
  /** The backup's lines, parsed. */
  backup: Array<{envelope: unknown; headers: Record<string, string>; native?: {broker: string; properties: Record<string, unknown>}}>
  /** The replay's warnings (what a restore said it could not put back). */
  warnings: string[]
}

/** `purgeFlags`: what the broker's purge needs besides (Service Bus: `--accept-delivery-cost`). */
export async function purgeAndRestore(url: string, dlq: string, count: number, purgeFlags: string[] = []): Promise<RoundTrip> {
  const dir = mkdtempSync(path.join(tmpdir(), 'bq-restore-'))
  try {
    const file = path.join(dir, 'backup.jsonl')
    const purged = await runBq(['dlq', 'purge', dlq, '--dlq', dlq, '--backup', file, '--yes', '--json', '-b', url, ...purgeFlags])
    assert.equal(purged.code, 0, purged.stderr)
    assert.equal((jsonResult(purged.stdout).counts as {purged: number}).purged, count, purged.stdout)
    const backup = readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as RoundTrip['backup'][number])
    const restored = await runBq(['replay', file, '--as-is', '--to', dlq, '--yes', '--json', '-b', url])
    assert.equal(restored.code, 0, restored.stderr)
    const output = JSON.parse(restored.stdout) as {result: {counts: {redriven: number}}; warnings: string[]}
    assert.equal(output.result.counts.redriven, count, restored.stdout)
    return {backup, warnings: output.warnings}
  } finally {
    rmSync(dir, {recursive: true, force: true})
  }
}
