/** The broker binding projections (spec-broker-bindings.md), one module per broker. */
export * from './rabbitmq.js'
export * from './sqs.js'
export * from './service-bus.js'
export * from './pulsar.js'
export * from './kafka.js'
export * from './artemis.js'
export * from './redis.js'
export type {DelayedProjectionOptions, ProjectionOptions} from './native-values.js'
