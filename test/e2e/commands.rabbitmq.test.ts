/** Every command end to end on the RabbitMQ. */
import {brokerCases, commandSuite} from './command-suite.js'

commandSuite(brokerCases.rabbitmq)
