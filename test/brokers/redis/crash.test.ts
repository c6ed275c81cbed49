/** SIGKILL during redrive and during purge on the Redis. */
import {crashCases, crashSuite, purgeCrashSuite} from '../../suites/crash-suite.js'

crashSuite(crashCases.redis)
purgeCrashSuite(crashCases.redis)
