/** SIGKILL during redrive on the RabbitMQ. */
import {crashCases, crashSuite} from './crash-suite.js'

crashSuite(crashCases.rabbitmq)
