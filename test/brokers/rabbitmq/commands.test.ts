/** Every command end to end on the RabbitMQ. */
import {brokerCases, commandSuite} from '../../suites/command-suite.js'

commandSuite(brokerCases.rabbitmq)
