/**
 * Network faults between bq and Apache Kafka, through the fault proxy: the outage only. Kafka
 * answers the bootstrap connection with the address it advertises (127.0.0.1:19092), so after
 * the first metadata request bq talks to the broker directly and a proxy on the bootstrap
 * address sees only that first exchange. A black-holed bootstrap is exactly an outage as bq
 * meets it; mid-run faults would need the broker to advertise the proxy's port.
 */
import {requireBroker} from '../../support/brokers.js'
import {faultSuite} from '../../suites/fault-suite.js'
import {kafkaHost, kafkaPort, kafkaUrl} from './support.js'

faultSuite({
  name: 'Kafka',
  directUrl: () => kafkaUrl,
  upstream: () => ({host: kafkaHost, port: kafkaPort}),
  proxiedUrl: (proxyPort) => `kafka://127.0.0.1:${proxyPort}`,
  available: (t) => requireBroker(t, 'Kafka', kafkaHost, kafkaPort),
  midRun: false,
})
