/** Network faults (outage, blip, slow link) between bq and ActiveMQ Artemis, through the fault proxy. */
import {after} from 'node:test'

import {requireBroker} from '../../support/brokers.js'
import {faultSuite} from '../../suites/fault-suite.js'
import {withManagement} from './support.js'

const url = new URL(process.env.BQ_TEST_ARTEMIS_URL ?? 'artemis://bq:bq@127.0.0.1:5673')
const port = Number(url.port || 5672)

// The suite's queues would otherwise stay on the broker.
after(async () => {
  await withManagement(url.href, async (management) => {
    const names = await management.attribute('broker', 'queueNames')
    const mine = Array.isArray(names.value) ? (names.value as string[]).filter((name) => name.startsWith('bqtest-fault')) : []
    for (const name of mine) await management.invoke('broker', 'destroyQueue', [name, true, true]).catch(() => undefined)
  }).catch(() => undefined)
})

faultSuite({
  name: 'Artemis',
  directUrl: () => url.href,
  upstream: () => ({host: url.hostname, port}),
  proxiedUrl: (proxyPort) => Object.assign(new URL(url.href), {port: String(proxyPort)}).href,
  available: (t) => requireBroker(t, 'Artemis', url.hostname, port),
  midRun: true,
  // A dead run's unsettled deliveries go back when Artemis sees its connection close; a browse does not show them until then.
  settle: async () => {
    await withManagement(url.href, async () => undefined)
    await new Promise((resolve) => setTimeout(resolve, 2000))
  },
})
