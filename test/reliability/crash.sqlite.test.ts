/** SIGKILL during redrive on the embedded store. */
import {crashCases, crashSuite} from './crash-suite.js'

crashSuite(crashCases.sqlite)
