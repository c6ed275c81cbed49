/**
 * Redis binding — spec-broker-bindings.md "Redis" and the manifest's `redis.payload_identity`.
 * A list element IS the canonical envelope bytes, stored and returned unchanged: no wrapping, no
 * added fields, no native metadata. Routing, tracing and attempts all come from the body, and the
 * replay marker cannot ride along (bypass is a no-op here).
 */
import type {NativeFields} from '../../envelope/fields.js'

export function redisNativeFields(): NativeFields {
  return {}
}
