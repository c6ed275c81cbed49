/** SIGKILL during redrive on the embedded store. */
import {crashCases, crashSuite} from '../../suites/crash-suite.js'

crashSuite(crashCases.sqlite)
