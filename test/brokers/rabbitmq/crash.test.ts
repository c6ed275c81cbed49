/** SIGKILL during redrive and during purge on the RabbitMQ. */
import {crashCases, crashSuite, purgeCrashSuite} from '../../suites/crash-suite.js'

crashSuite(crashCases.rabbitmq)
purgeCrashSuite(crashCases.rabbitmq)
