/** SIGKILL during redrive on the Redis. */
import {crashCases, crashSuite} from '../../suites/crash-suite.js'

crashSuite(crashCases.redis)
