/** The canary's stage arithmetic and decisions (ops/canary.ts) with stand-in stages and watches. */
import {describe, test} from 'node:test'
import assert from 'node:assert/strict'

import {canaryRedrive, percent, stageSizes} from '../../src/lib/ops/canary.js'
import type {CanaryHooks, CanaryPlan} from '../../src/lib/ops/canary.js'
import type {MessageView} from '../../src/lib/ops/message-view.js'
import type {RedriveCounts} from '../../src/lib/ops/redrive-types.js'

const plan = (over: Partial<CanaryPlan> = {}): CanaryPlan => ({size: 10, watchMs: 0, abortAt: 0.05, ramp: 4, max: 0, ...over})
const counts = (redriven: number): RedriveCounts => ({examined: redriven, redriven, would_redrive: 0, skipped: 0, poison: 0, failed: 0})

/** A DLQ of `total` ids; each stage moves the next ones; `back(stage, ids)` says which come back. */
function hooks(total: number, back: (stage: number, ids: string[]) => string[]): CanaryHooks & {limits: number[]} {
  let next = 0
  const limits: number[] = []
  return {
    limits,
    runStage: async (_stage, limit, hold, onItem) => {
      limits.push(limit)
      const ids: string[] = []
      for (; next < total && ids.length < limit; next++) {
        const id = `m${next}`
        assert.equal(hold({id} as MessageView), undefined)
        ids.push(id)
        onItem({id, outcome: 'redriven'})
      }
      return {dlq: 'q.dlq', source: 's', target: 's', dry_run: false, counts: counts(ids.length), stopped_early: false}
    },
    watch: async (request) => ({returned: back(request.stage, [...request.moved.keys()]).map((id) => ({id, envelope: {}, deadLetter: {reason: 'failed', exception: 'E'}}) as unknown as MessageView), interrupted: false, watchedMs: 0}),
    checkpoint: () => {},
  }
}

describe('canary stages', () => {
  test('stage sizes ramp and stop at what is selected, or at --max', () => {
    assert.deepEqual(stageSizes({size: 10, ramp: 4, max: 0}, 1000), [10, 40, 160, 640, 150])
    assert.deepEqual(stageSizes({size: 10, ramp: 4, max: 100}, 1000), [10, 40, 50])
    assert.deepEqual(stageSizes({size: 5, ramp: 1, max: 0}, 12), [5, 5, 2])
    assert.deepEqual(stageSizes({size: 5, ramp: 4, max: 0}, 0), [])
    assert.equal(percent(0.05), '5%')
    assert.equal(percent(0.125), '12.5%')
  })

  test('nothing comes back: every stage runs, each at most its size; --max bounds what moves in all', async () => {
    const all = hooks(100, () => [])
    const report = await canaryRedrive({dlq: 'q.dlq', source: 's', target: 's'}, plan(), all)
    assert.deepEqual(report.stages.map((s) => s.moved), [10, 40, 50])
    assert.equal(report.counts.redriven, 100)
    assert.equal(report.aborted, false)
    const capped = hooks(100, () => [])
    const bounded = await canaryRedrive({dlq: 'q.dlq', source: 's', target: 's'}, plan({max: 30}), capped)
    assert.deepEqual(capped.limits, [10, 20])
    assert.equal(bounded.counts.redriven, 30)
  })

  test('a stage whose returned share reaches --abort-at stops the canary; below it, the returns are reported and it goes on', async () => {
    const failing = await canaryRedrive({dlq: 'q.dlq', source: 's', target: 's'}, plan({abortAt: 0.5}), hooks(100, (_, ids) => ids.slice(0, 5)))
    assert.equal(failing.aborted, true)
    assert.deepEqual(failing.stages.map((s) => [s.moved, s.returned, s.aborted]), [[10, 5, true]])
    assert.deepEqual(failing.returned.groups.map((g) => [g.key.exception, g.count]), [['E', 5]])
    const some = await canaryRedrive({dlq: 'q.dlq', source: 's', target: 's'}, plan({abortAt: 0.1}), hooks(50, (stage, ids) => (stage === 2 ? ids.slice(0, 1) : [])))
    assert.equal(some.aborted, false)
    assert.equal(some.returned.count, 1)
    assert.deepEqual(some.stages.map((s) => s.moved), [10, 40])
  })
})
