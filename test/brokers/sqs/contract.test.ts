/**
 * The shared broker contract against SQS (BQ_TEST_SQS_URL, default ElasticMQ on
 * 127.0.0.1:9324), opened through the registry as `bq` does.
 *
 * Where SQS differs by nature the suite branches on the adapter's capabilities rather than skipping:
 * - `capabilities.ordered` is false: a standard queue delivers in no guaranteed order (ElasticMQ
 *   too: messages of one batch come back shuffled), and a message made visible again has no place
 *   to return to. Order-free tests still check every body, byte for byte, and every count.
 * - `afterCrash: 'timeout-returns'`: a crashed drain's reservations come back when their
 *   visibility timeout ends, not through `recover()` (which returns 0): the crash fixture runs
 *   with `?visibility=3`, and `reservationsReturnWithinMs` says how long the test waits.
 * - Bodies: SQS's largest message is 1 MiB, so the round-trip test's big body is exactly 1 MiB.
 * Skipped from the capabilities: the start-bounded drain (`drainBoundedAtStart: false`: SQS bounds
 * by ApproximateNumberOfMessages, a count, and cannot tell a message sent during the run from an
 * older one on a standard queue) and the atomic move (no SQS transaction spans a send and a delete).
 */
import {after} from 'node:test'

import {openBroker} from '../../../src/lib/brokers/registry.js'
import {brokerContractSuite} from '../../suites/contract-suite.js'
import {runFixture} from '../../suites/fixtures/run-fixture.js'
import {closeRawSqs, deleteQueues, sqsAvailable, sqsUrl, sqsUrlWith} from './support.js'

const CRASH_VISIBILITY_SECONDS = 3

after(() => closeRawSqs())

brokerContractSuite('sqs', {
  open: () => openBroker(sqsUrl),
  available: sqsAvailable,
  maxBodyBytes: 1_048_576,
  crashDrain: async (q, take, release) => {
    await runFixture('crash-drain.ts', [sqsUrlWith({visibility: String(CRASH_VISIBILITY_SECONDS)}), q, String(take), String(release)])
  },
  reservationsReturnWithinMs: CRASH_VISIBILITY_SECONDS * 1000 + 5000,
  cleanup: deleteQueues,
})
