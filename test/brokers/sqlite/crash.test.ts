/** SIGKILL during redrive and during purge on the embedded store. */
import {crashCases, crashSuite, purgeCrashSuite} from '../../suites/crash-suite.js'

crashSuite(crashCases.sqlite)
purgeCrashSuite(crashCases.sqlite)
