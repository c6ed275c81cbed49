/**
 * Redis binding — spec-broker-bindings.md "Redis" and the manifest's `redis.payload_identity`.
 * A list element is the canonical envelope bytes, stored and returned unchanged, or, when the
 * message carries headers (`traceparent`, the replay marker), the SDKs' transport-owned
 * `__bq_frame` frame around those bytes (frames.ts). Routing, tracing and attempts all come from
 * the body; nothing is projected onto native metadata.
 */
import type {NativeFields} from '../../envelope/fields.js'

export function redisNativeFields(): NativeFields {
  return {}
}
