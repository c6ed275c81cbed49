/** Every command end to end on the Redis. */
import {brokerCases, commandSuite} from './command-suite.js'

commandSuite(brokerCases.redis)
