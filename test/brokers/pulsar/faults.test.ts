/**
 * Network faults between bq and Apache Pulsar, through the fault proxy. bq speaks only to the
 * admin/WebSocket port (8080: REST and the WebSocket API), so proxying that one port carries
 * every byte bq sends or receives; the binary port (6650) is not used.
 *
 * Acks over the WebSocket are not confirmed; after a blip bq reads the subscription's cursor to
 * count the ones that never landed, so duplicates stay within possible_duplicates as elsewhere.
 */
import {requireBroker} from '../../support/brokers.js'
import {faultSuite} from '../../suites/fault-suite.js'

const pulsarUrl = process.env.BQ_TEST_PULSAR_URL ?? 'pulsar://127.0.0.1:6650?admin=http://127.0.0.1:8080'
const admin = new URL(new URL(pulsarUrl).searchParams.get('admin') ?? 'http://127.0.0.1:8080')
const port = Number(admin.port || 8080)

faultSuite({
  name: 'Pulsar',
  directUrl: () => pulsarUrl,
  upstream: () => ({host: admin.hostname, port}),
  proxiedUrl: (proxyPort) => {
    const proxied = new URL(pulsarUrl)
    proxied.searchParams.set('admin', `${admin.protocol}//127.0.0.1:${proxyPort}`)
    return proxied.href
  },
  available: (t) => requireBroker(t, 'Pulsar (admin/WebSocket port)', admin.hostname, port),
  midRun: true,
  // Under a loaded CI run the admin API took over 3 s to answer a redrive's first stats call, so
  // the run gave up before the fault it was to meet (a CI run at 1c71ca7).
  midRunTimeoutSeconds: 10,
})
