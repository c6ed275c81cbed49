/** Network faults (outage, blip, slow link) between bq and Redis, through the fault proxy. */
import {requireBroker} from '../../support/brokers.js'
import {faultSuite} from '../../suites/fault-suite.js'

const url = new URL(process.env.BQ_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0')
const port = Number(url.port || 6379)

faultSuite({
  name: 'Redis',
  directUrl: () => url.href,
  upstream: () => ({host: url.hostname, port}),
  proxiedUrl: (proxyPort) => Object.assign(new URL(url.href), {port: String(proxyPort)}).href,
  available: (t) => requireBroker(t, 'Redis', url.hostname, port),
  midRun: true,
})
