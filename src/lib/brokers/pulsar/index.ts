/** Apache Pulsar over its WebSocket and admin REST APIs (`pulsar://`, `pulsar+ssl://`, ws). */
import type {BrokerModule} from '../adapter.js'
import {parseBrokerUrl} from '../shared/parse-url.js'
import {createAdapter} from './adapter.js'

export const broker: BrokerModule = {
  open: async (rawUrl, displayUrl, {timeouts}) => createAdapter(parseBrokerUrl(rawUrl, displayUrl), displayUrl, {timeouts}),
}

export {createAdapter, type PulsarAdapterOptions} from './adapter.js'
export {PulsarDrainSession} from './drain.js'
export * from './url.js'
export * from './binding.js'
