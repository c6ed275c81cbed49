/** Redis reliable lists (`redis://`, `rediss://`, ioredis). */
import type {BrokerModule} from '../adapter.js'
import {parseBrokerUrl} from '../shared/parse-url.js'
import {createRedisAdapter} from './adapter.js'

export const broker: BrokerModule = {
  // --timeout overrides the URL's ?timeout= for commands (the registry has already folded the URL's into `timeouts`).
  open: (rawUrl, displayUrl, {timeouts, warn}) =>
    createRedisAdapter(parseBrokerUrl(rawUrl, displayUrl), displayUrl, {connectTimeoutMs: timeouts.connectMs, commandTimeoutMs: timeouts.explicit ? timeouts.operationMs : undefined, warn}),
}

export {createRedisAdapter, type RedisAdapterOptions} from './adapter.js'
export {RedisDrainSession} from './drain.js'
export * from './url.js'
export * from './binding.js'
