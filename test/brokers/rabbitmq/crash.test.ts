/** SIGKILL during redrive on the RabbitMQ. */
import {crashCases, crashSuite} from '../../suites/crash-suite.js'

crashSuite(crashCases.rabbitmq)
