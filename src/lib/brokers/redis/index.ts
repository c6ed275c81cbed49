/** Redis reliable lists (`redis://`, `rediss://`, `redis+sentinel://`, `rediss+sentinel://`; ioredis). */
import type {BrokerModule} from '../adapter.js'
import {createRedisAdapter} from './adapter.js'

export const broker: BrokerModule = {
  // --timeout overrides the URL's ?timeout= for commands (the registry has already folded the URL's into `timeouts`).
  // The URL goes as text: a sentinel URL's host list is not one WHATWG URL parsing accepts (url.ts).
  open: (rawUrl, displayUrl, {timeouts, warn}) =>
    createRedisAdapter(rawUrl, displayUrl, {connectTimeoutMs: timeouts.connectMs, commandTimeoutMs: timeouts.explicit ? timeouts.operationMs : undefined, warn}),
}

export {createRedisAdapter, type RedisAdapterOptions} from './adapter.js'
export {RedisDrainSession} from './drain.js'
export * from './url.js'
export * from './binding.js'
