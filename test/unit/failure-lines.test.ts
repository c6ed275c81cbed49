/** The reasons a run's text output gives for its failed messages when it lists none (--list off). */
import assert from 'node:assert/strict'
import {test} from 'node:test'

import {failureLines} from '../../src/lib/output/redrive-report.js'

test('no failure, no lines', () => {
  assert.deepEqual(failureLines(new Map()), [])
})

test('one line per reason, most frequent first, the rest counted, and where to see each message', () => {
  const reasons = new Map([['no original queue recorded: use --to', 2], ['broker refused', 5], ['too large', 1], ['a patch failed', 1], ['other', 3]])
  assert.deepEqual(failureLines(reasons), [
    '5 failed: broker refused',
    '3 failed: other',
    '2 failed: no original queue recorded: use --to',
    '2 failed for 2 other reason(s)',
    '--list (or --json) shows each message',
  ])
})
