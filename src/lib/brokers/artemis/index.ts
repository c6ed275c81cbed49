/** ActiveMQ Artemis over AMQP 1.0 (`artemis://`, `artemis+ssl://`, rhea). */
import type {BrokerModule} from '../adapter.js'
import {parseBrokerUrl} from '../shared/parse-url.js'
import {createAdapter} from './adapter.js'

export const broker: BrokerModule = {
  open: (rawUrl, displayUrl, {timeouts}) => createAdapter(parseBrokerUrl(rawUrl, displayUrl), displayUrl, {connectTimeoutMs: timeouts.connectMs}),
}

export {createAdapter, ARTEMIS_CAPABILITIES, type ArtemisAdapterOptions} from './adapter.js'
export {ArtemisDrainSession} from './drain.js'
export * from './url.js'
export * from './binding.js'
