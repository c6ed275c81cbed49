import {reconcileArtemisAttempts, reconcileKafkaAttempts, reconcilePulsarAttempts, reconcileRabbitAttempts, reconcileServiceBusAttempts, reconcileSqsAttempts} from '../bindings/index.js'
import type {NativeFields} from '../envelope/fields.js'

/**
 * Attempts as each binding defines them: the body count reconciled with the broker's own
 * counter (spec-broker-bindings.md). Brokers without a counter keep the body's value.
 */
export function reconcileAttempts(brokerKind: string, bodyAttempts: number | undefined, native: NativeFields): number | undefined {
  if (bodyAttempts === undefined) return native.attempts
  switch (brokerKind) {
    case 'amqp': return reconcileRabbitAttempts(bodyAttempts, native.attempts)
    case 'sqs': return reconcileSqsAttempts(bodyAttempts, native.deliveryCount)
    case 'service-bus': return reconcileServiceBusAttempts(bodyAttempts, native.deliveryCount)
    case 'pulsar': return reconcilePulsarAttempts(bodyAttempts, native.deliveryCount)
    case 'kafka': return reconcileKafkaAttempts(bodyAttempts, native.attempts)
    case 'artemis': return reconcileArtemisAttempts(bodyAttempts, native.deliveryCount)
    default: return bodyAttempts
  }
}
