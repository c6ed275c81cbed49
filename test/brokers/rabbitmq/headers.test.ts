/** Application headers (AMQP headers) through browse, redrive and export → replay on RabbitMQ. */
import {brokerCases} from '../../suites/command-suite.js'
import {headersSuite} from '../../suites/headers-suite.js'

headersSuite(brokerCases.rabbitmq)
