/** Every command end to end on the Redis. */
import {brokerCases, commandSuite} from '../../suites/command-suite.js'

commandSuite(brokerCases.redis)
