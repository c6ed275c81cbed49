/**
 * SIGKILL during redrive on ActiveMQ Artemis (BQ_TEST_ARTEMIS_URL, default
 * artemis://bq:bq@127.0.0.1:5673).
 *
 * At-least-once: a copy is published and accepted on the target before its original is accepted
 * on the DLQ; a kill between the two leaves both. Nothing is staged by bq: the killed run's
 * unsettled deliveries go back to the DLQ when Artemis sees its connection close, and `settle`
 * waits (bounded) until the broker shows none of them in delivery any more, because a browse does
 * not show messages that are out for delivery.
 */
import {after} from 'node:test'
import type {TestContext} from 'node:test'

import {requireBroker} from '../../support/brokers.js'
import {withManagement} from './support.js'
import {crashSuite} from '../../suites/crash-suite.js'

const url = process.env.BQ_TEST_ARTEMIS_URL ?? 'artemis://bq:bq@127.0.0.1:5673'
const parsed = new URL(url)

/** The suite's queues (bqtest-crash<n>-…, with .dlq) would otherwise stay on the broker. */
after(async () => {
  await withManagement(url, async (management) => {
    const names = await management.attribute('broker', 'queueNames')
    const mine = Array.isArray(names.value) ? (names.value as string[]).filter((name) => name.startsWith('bqtest-crash')) : []
    for (const name of mine) await management.invoke('broker', 'destroyQueue', [name, true, true]).catch(() => undefined)
  }).catch(() => undefined)
})

crashSuite({
  name: 'artemis',
  url: () => url,
  // 10,000 per trial (BQ_CRASH_MESSAGES=20000 for the full size): the series took 180 s of a CI
  // run that had grown to 50 minutes; a kill still lands at a random point of the run.
  messages: 10_000,
  available: (t: TestContext) => requireBroker(t, 'Artemis', parsed.hostname, Number(parsed.port || 5672)),
  settle: async (queues) => {
    await withManagement(url, async (management) => {
      // Generous: a loaded CI machine has kept Artemis busy for long stretches. A queue that was
      // never created answers !ok, which is nothing in delivery.
      const deadline = Date.now() + 120_000
      for (const queue of queues) {
        for (;;) {
          const delivering = await management.attribute(`queue.${queue}`, 'deliveringCount')
          if (!delivering.ok || delivering.value === 0) break
          if (Date.now() > deadline) throw new Error(`Artemis still shows ${String(delivering.value)} message(s) of "${queue}" in delivery 120 s after the kill`)
          await new Promise((resolve) => setTimeout(resolve, 100))
        }
      }
    })
  },
})
