/** The broker binding projections (spec-broker-bindings.md), one module per broker. */
export * from '../brokers/rabbitmq/binding.js'
export * from '../brokers/sqs/binding.js'
export * from '../brokers/service-bus/binding.js'
export * from '../brokers/pulsar/binding.js'
export * from '../brokers/kafka/binding.js'
export * from '../brokers/artemis/binding.js'
export * from '../brokers/redis/binding.js'
export type {DelayedProjectionOptions, ProjectionOptions} from '../brokers/shared/native-values.js'
