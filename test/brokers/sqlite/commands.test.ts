/** Every command end to end on the embedded store. */
import {brokerCases, commandSuite} from '../../suites/command-suite.js'

commandSuite(brokerCases.sqlite)
