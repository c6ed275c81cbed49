/** Redis reliable lists (`redis://`, `rediss://`, ioredis). */
import type {BrokerModule} from '../adapter.js'
import {parseBrokerUrl} from '../shared/parse-url.js'
import {createRedisAdapter} from './adapter.js'

export const broker: BrokerModule = {
  open: (rawUrl, displayUrl) => createRedisAdapter(parseBrokerUrl(rawUrl, displayUrl), displayUrl),
}

export {createRedisAdapter, type RedisAdapterOptions} from './adapter.js'
export {RedisDrainSession} from './drain.js'
export * from './url.js'
export * from './binding.js'
