/**
 * The pieces behind bq's one owner of exit codes and JSON: the error table, what a redrive or
 * replay report means, the JSON output shape, the writer's broken-pipe path, confirmation and
 * the two-broker helper.
 */
import {describe, test} from 'node:test'
import assert from 'node:assert/strict'
import {mkdtempSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import path from 'node:path'
import {PassThrough, Writable} from 'node:stream'

import {withBrokers} from '../../src/lib/cli/broker.js'
import {confirmOrRequireYes} from '../../src/lib/cli/confirm.js'
import {unfinishedRun} from '../../src/lib/cli/move-run.js'
import type {MoveResult} from '../../src/lib/cli/move-run.js'
import {
  BqError, BrokenPipeError, ConnectionError, ExitCode, InterruptedError, InvalidInputError, NotConfirmedError, PartialError, UsageError, outcomeOf,
} from '../../src/lib/errors.js'
import {failureJson, successJson} from '../../src/lib/output/json-output.js'
import {OutputWriter} from '../../src/lib/output/writer.js'

describe('the exit code table', () => {
  test('every outcome has its code and exit code', () => {
    const report = {counts: {}}
    const cases: Array<[unknown, string, number]> = [
      [new BqError('x'), 'failure', ExitCode.failure],
      [new InvalidInputError('2 of 6 messages invalid', {}), 'invalid-input', 1],
      [new UsageError('bad flag'), 'usage', 2],
      [new UsageError('bad registry', 'registry'), 'registry', 2],
      [new NotConfirmedError(), 'not-confirmed', 2],
      [new NotConfirmedError('no terminal', 'confirmation-needed'), 'confirmation-needed', 2],
      [new PartialError('1 failed', report), 'partial', 3],
      [new ConnectionError('cannot connect'), 'connection', 4],
      [new InterruptedError('interrupted', report), 'interrupted', 130],
      [new BrokenPipeError(), 'broken-pipe', 0],
      [new TypeError('boom\nsecond line'), 'unexpected', 1],
    ]
    for (const [error, code, exitCode] of cases) {
      const outcome = outcomeOf(error)
      assert.deepEqual([outcome.code, outcome.exitCode], [code, exitCode], String(error))
    }
    assert.equal(outcomeOf(new TypeError('boom\nsecond line')).message, 'unexpected error: boom')
    assert.equal(outcomeOf(new NotConfirmedError()).message, 'not confirmed: nothing was changed')
    assert.ok(new NotConfirmedError() instanceof UsageError)
  })

  test('partial, interrupted and invalid input carry their result and are already reported', () => {
    const report = {counts: {failed: 1}}
    for (const error of [new PartialError('p', report), new InterruptedError('i', report), new InvalidInputError('v', report)]) {
      const outcome = outcomeOf(error)
      assert.equal(outcome.result, report)
      assert.equal(outcome.reported, true)
    }
    assert.equal('result' in outcomeOf(new UsageError('u')), false)
    assert.equal(outcomeOf(new UsageError('u')).reported, false)
  })
})

describe('what a move report means', () => {
  const result = (counts: Partial<MoveResult['counts']>, extra: Partial<MoveResult> = {}): MoveResult => ({
    dlq: 'orders.dlq', source: 's', target: 't', dry_run: false, stopped_early: false, items: [],
    counts: {examined: 0, redriven: 0, would_redrive: 0, skipped: 0, poison: 0, failed: 0, ...counts}, ...extra,
  })

  test('every selected message moved (unselected and poison stay): success', () => {
    assert.equal(unfinishedRun(result({examined: 5, redriven: 3, skipped: 1, poison: 1}), 'moved'), undefined)
    assert.equal(unfinishedRun(result({examined: 0}), 'moved'), undefined)
  })

  test('a failed message, or a run stopped early, is partial and carries the report', () => {
    const report = result({examined: 5, redriven: 4, failed: 1})
    const partial = unfinishedRun(report, 'moved')
    assert.ok(partial instanceof PartialError)
    assert.equal(partial.result, report)
    assert.equal(partial.message, 'not every selected message was moved: 4 moved, 1 failed')
    const stopped = unfinishedRun(result({examined: 2, redriven: 1, failed: 1}, {stopped_early: true, stop_reason: 'publishing to q failed: down'}), 'published')
    assert.equal(stopped?.message, 'not every selected message was published: 1 published, 1 failed; stopped early: publishing to q failed: down')
    const dry = unfinishedRun(result({examined: 2, would_redrive: 1, failed: 1}, {dry_run: true}), 'moved')
    assert.equal(dry?.message, 'not every selected message could be moved: 1 would be moved, 1 failed')
  })

  test('an interrupted run is exit 130 with the report', () => {
    const report = result({examined: 500, redriven: 500}, {stopped_early: true, stop_reason: 'interrupted'})
    const interrupted = unfinishedRun(report, 'moved')
    assert.ok(interrupted instanceof InterruptedError)
    assert.equal(interrupted.exitCode, 130)
    assert.equal(interrupted.result, report)
  })
})

describe('the JSON output shape', () => {
  test('success: ok, result, warnings', () => {
    assert.deepEqual(Object.keys(successJson({a: 1}, [])), ['ok', 'result', 'warnings'])
    assert.deepEqual(successJson({a: 1}, ['w']), {ok: true, result: {a: 1}, warnings: ['w']})
  })

  test('failure: ok, error {code, message, exit_code}, result when there is one, warnings', () => {
    const error = {code: 'partial', message: 'm', exitCode: 3}
    assert.deepEqual(Object.keys(failureJson(error, {counts: {}}, [])), ['ok', 'error', 'result', 'warnings'])
    assert.deepEqual(failureJson({...error, extra: true} as typeof error, undefined, ['w']), {ok: false, error: {code: 'partial', message: 'm', exit_code: 3}, warnings: ['w']})
  })
})

describe('OutputWriter', () => {
  test('a closed pipe ends the output quietly: the next flush throws BrokenPipeError', async () => {
    const stream = new PassThrough()
    const out = new OutputWriter(stream)
    out.line('one')
    await out.flush()
    stream.emit('error', Object.assign(new Error('write EPIPE'), {code: 'EPIPE'}))
    out.line('two')
    await assert.rejects(out.flush(), BrokenPipeError)
    await assert.rejects(out.maybeFlush(), BrokenPipeError)
  })

  test('a flush waiting for drain fails when the pipe closes instead', async () => {
    const stream = new Writable({highWaterMark: 1, write: () => {}})
    const out = new OutputWriter(stream)
    out.line('more than the high-water mark')
    const flushing = out.flush()
    stream.emit('error', Object.assign(new Error('write EPIPE'), {code: 'EPIPE'}))
    await assert.rejects(flushing, BrokenPipeError)
  })

  test('another stream error surfaces on the next flush, not as an uncaught exception', async () => {
    const stream = new PassThrough()
    const out = new OutputWriter(stream)
    stream.emit('error', Object.assign(new Error('disk full'), {code: 'ENOSPC'}))
    await assert.rejects(out.flush(), /disk full/)
  })
})

describe('confirmation', () => {
  test('--yes proceeds; without a terminal it is "confirmation needed" and nothing was changed', async () => {
    await confirmOrRequireYes('Redrive 3 message(s)?', true)
    if (process.stdin.isTTY && process.stdout.isTTY) return
    await assert.rejects(confirmOrRequireYes('Redrive 3 message(s)?', false), (error: unknown) => {
      assert.ok(error instanceof NotConfirmedError)
      assert.equal(error.code, 'confirmation-needed')
      assert.equal(error.exitCode, 2)
      assert.equal(error.message, 'Redrive 3 message(s): not on a terminal, so nothing was changed; add --yes to proceed')
      return true
    })
  })
})

describe('withBrokers', () => {
  test('without --to-broker the target is the source; with it both are opened and both closed, also on failure', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'bq-brokers-'))
    try {
      const a = `sqlite://${path.join(dir, 'a.db')}`
      const b = `sqlite://${path.join(dir, 'b.db')}`
      const closed: string[] = []
      const spy = (name: string, adapter: {close: () => Promise<void>}) => {
        const close = adapter.close.bind(adapter)
        adapter.close = async () => {
          closed.push(name)
          await close()
        }
      }
      await withBrokers(a, undefined, async (source, target) => {
        assert.equal(source, target)
        spy('only', source)
      })
      assert.deepEqual(closed, ['only'])
      closed.length = 0
      await assert.rejects(withBrokers(a, b, async (source, target) => {
        assert.notEqual(source, target)
        assert.match(target.displayUrl, /b\.db$/)
        spy('source', source)
        spy('target', target)
        throw new Error('work failed')
      }), /work failed/)
      assert.deepEqual(closed, ['target', 'source'])
    } finally {
      rmSync(dir, {recursive: true, force: true})
    }
  })
})
