/** RabbitMQ over AMQP 0-9-1 (`amqp://`, `amqps://`, amqplib). */
import type {BrokerModule} from '../adapter.js'
import {parseBrokerUrl} from '../shared/parse-url.js'
import {createRabbitAdapter} from './adapter.js'

export const broker: BrokerModule = {
  open: (rawUrl, displayUrl, {timeouts, warn}) => createRabbitAdapter(parseBrokerUrl(rawUrl, displayUrl), displayUrl, {connectTimeoutMs: timeouts.connectMs, warn}),
}

export {createRabbitAdapter, RabbitAdapter, RABBIT_CAPABILITIES, type RabbitAdapterOptions} from './adapter.js'
export {RabbitDrainSession} from './drain.js'
export * from './binding.js'
