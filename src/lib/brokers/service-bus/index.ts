/** Azure Service Bus (`sb://…` or a connection string, @azure/service-bus). */
import type {BrokerModule} from '../adapter.js'
import {createAdapterFromString} from './adapter.js'

export const broker: BrokerModule = {
  // The raw string: a connection string (`Endpoint=sb://…;…`) is not a URL.
  open: (rawUrl, displayUrl, {timeouts}) => createAdapterFromString(rawUrl, displayUrl, {timeouts}),
}

export {createAdapterFromString, SERVICE_BUS_CAPABILITIES, type ServiceBusAdapterOptions} from './adapter.js'
export {ServiceBusDrainSession} from './drain.js'
export * from './url.js'
export * from './binding.js'
