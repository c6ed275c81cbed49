/** SIGKILL during redrive on the Redis. */
import {crashCases, crashSuite} from './crash-suite.js'

crashSuite(crashCases.redis)
