/**
 * The redrive progress model (kafka/state.ts) as pure functions: no broker needed. A randomized
 * run checks it against a plain set of done offsets.
 */
import assert from 'node:assert/strict'
import {describe, it} from 'node:test'

import {PartitionProgress} from '../../../src/lib/brokers/kafka/state.js'

describe('kafka redrive progress', () => {
  it('starts at the log start and advances the committed offset over a finished prefix', () => {
    const progress = PartitionProgress.fresh(5)
    assert.equal(progress.committed, 5)
    progress.markDone(6)
    progress.markDone(8)
    assert.equal(progress.committed, 5)
    assert.deepEqual(progress.encode(), {offset: 5, metadata: 'bq1:1.1.1.1', truncated: false})
    progress.markDone(5)
    assert.equal(progress.committed, 7)
    progress.markDone(7)
    assert.equal(progress.committed, 9)
    assert.deepEqual(progress.encode(), {offset: 9, metadata: '', truncated: false})
  })

  it('round-trips through the commit: waiting runs stay waiting, done runs stay done', () => {
    const progress = PartitionProgress.fresh(0)
    for (const offset of [0, 1, 3, 4, 5, 9, 40]) progress.markDone(offset)
    const encoded = progress.encode()
    assert.deepEqual(encoded, {offset: 2, metadata: 'bq1:1.3.3.1.u.1', truncated: false})
    const again = PartitionProgress.decode(encoded.offset, encoded.metadata, 0, 100)
    for (let offset = 0; offset < 100; offset++) assert.equal(again.isDone(offset), progress.isDone(offset), `offset ${offset}`)
    assert.equal(again.waitingIn(0, 100), 100 - 7)
    assert.equal(again.nextWaiting(3), 6)
    assert.equal(again.nextWaiting(0), 2)
    assert.equal(again.nextWaiting(41), 41)
  })

  it('describes only runs below the lowest record still in flight', () => {
    const progress = PartitionProgress.fresh(0)
    for (const offset of [1, 2, 5, 6]) progress.markDone(offset)
    assert.deepEqual(progress.encode(4), {offset: 0, metadata: 'bq1:1.2', truncated: false})
    assert.deepEqual(progress.encode(2), {offset: 0, metadata: 'bq1:1.1', truncated: false})
    assert.deepEqual(progress.encode(1), {offset: 0, metadata: '', truncated: false})
  })

  it('cuts the highest runs to fit a metadata limit (they are read again, never lost)', () => {
    const progress = PartitionProgress.fresh(0)
    for (let offset = 1; offset < 200; offset += 2) progress.markDone(offset)
    const cut = progress.encode(Number.POSITIVE_INFINITY, 20)
    assert.equal(cut.truncated, true)
    assert.ok(cut.metadata.length <= 20)
    const decoded = PartitionProgress.decode(cut.offset, cut.metadata, 0, 200)
    for (let offset = 0; offset < 200; offset++) {
      if (decoded.isDone(offset)) assert.ok(progress.isDone(offset), `offset ${offset} done only after the cut`)
    }
  })

  it('treats records below the log start as done and ignores a commit from an earlier topic', () => {
    const trimmed = PartitionProgress.decode(3, 'bq1:2.4', 6, 20)
    assert.equal(trimmed.committed, 9)
    const stale = PartitionProgress.decode(500, '', 0, 20)
    assert.equal(stale.committed, 0)
    assert.equal(stale.waitingIn(0, 20), 20)
    assert.equal(PartitionProgress.decode(undefined, '', 4, 20).committed, 4)
  })

  it('ignores metadata that is not bq\'s or is damaged (re-reads instead of skipping)', () => {
    for (const metadata of ['', 'someone-else', 'bq1:', 'bq1:1', 'bq1:0.3', 'bq1:1.x!', 'bq1:zzzzzzzzzzzz.1']) {
      const progress = PartitionProgress.decode(10, metadata, 0, 100)
      assert.equal(progress.committed, 10, metadata)
      assert.equal(progress.waitingIn(0, 100), 90, metadata)
    }
  })

  it('agrees with a plain set of done offsets under random acks', () => {
    let seed = 42
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31)
    for (let round = 0; round < 50; round++) {
      const size = 1 + Math.floor(random() * 300)
      const low = Math.floor(random() * 5)
      const progress = PartitionProgress.fresh(low)
      const done = new Set<number>()
      for (let i = 0; i < size; i++) {
        const offset = low + Math.floor(random() * size)
        progress.markDone(offset)
        done.add(offset)
      }
      const decoded = PartitionProgress.decode(progress.encode().offset, progress.encode().metadata, low, low + size + 1)
      for (let offset = low; offset <= low + size; offset++) {
        assert.equal(progress.isDone(offset), done.has(offset), `round ${round} offset ${offset}`)
        assert.equal(decoded.isDone(offset), done.has(offset), `round ${round} decoded offset ${offset}`)
      }
      assert.equal(progress.waitingIn(low, low + size + 1), size + 1 - done.size)
    }
  })
})
