/** Network faults (outage, blip, slow link) between bq and RabbitMQ, through the fault proxy. */
import {requireBroker} from '../../support/brokers.js'
import {faultSuite} from '../../suites/fault-suite.js'

const url = new URL(process.env.BQ_TEST_AMQP_URL ?? 'amqp://guest:guest@127.0.0.1:5672')
const port = Number(url.port || 5672)

faultSuite({
  name: 'RabbitMQ',
  directUrl: () => url.href,
  upstream: () => ({host: url.hostname, port}),
  proxiedUrl: (proxyPort) => Object.assign(new URL(url.href), {port: String(proxyPort)}).href,
  available: (t) => requireBroker(t, 'RabbitMQ', url.hostname, port),
  midRun: true,
})
