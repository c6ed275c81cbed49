/** Apache Kafka (`kafka://host:port[,host:port]`); its client library sits behind ./client/. */
import type {BrokerModule} from '../adapter.js'
import {createAdapterFromString} from './adapter.js'

export const broker: BrokerModule = {
  // The raw string: a `host:port,host:port` list is not a WHATWG URL.
  open: (rawUrl, displayUrl, {timeouts}) => createAdapterFromString(rawUrl, displayUrl, {timeouts}),
}

export {createAdapterFromString, createKafkaAdapter, KafkaAdapter, KAFKA_CAPABILITIES, redriveGroup, type KafkaAdapterOptions} from './adapter.js'
export {KafkaDrainSession} from './drain.js'
export * from './url.js'
export * from './binding.js'
