/**
 * Network faults between bq and Apache Kafka, through the fault proxy. Kafka answers a client's
 * metadata request with the address it advertises for the listener the client came in on, so a
 * proxy in front of the ordinary listener would see only the bootstrap exchange. The test broker
 * has a second listener for this (BQ_TEST_KAFKA_FAULT=host:listenerPort:proxyPort, from
 * test/brokers/brokers.sh env): it advertises the proxy's fixed port, and the proxy forwards to
 * the listener, so every connection bq makes, to the group coordinator and the partition leader
 * too, runs through the proxy and the mid-run faults apply.
 */
import {requireBroker} from '../../support/brokers.js'
import {faultSuite} from '../../suites/fault-suite.js'
import {kafkaHost, kafkaPort, kafkaUrl} from './support.js'

const [faultHost, listenerPort, proxyPort] = (process.env.BQ_TEST_KAFKA_FAULT ?? '127.0.0.1:19094:19095').split(':')

faultSuite({
  name: 'Kafka',
  directUrl: () => kafkaUrl,
  upstream: () => ({host: faultHost, port: Number(listenerPort)}),
  listenPort: Number(proxyPort),
  proxiedUrl: (port) => `kafka://${faultHost}:${port}`,
  available: (t) => requireBroker(t, 'Kafka', kafkaHost, kafkaPort),
  midRun: true,
})
