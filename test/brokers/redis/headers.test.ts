/** Application headers (the SDK frame's headers) through browse, redrive and export → replay on Redis. */
import {brokerCases} from '../../suites/command-suite.js'
import {headersSuite} from '../../suites/headers-suite.js'

headersSuite(brokerCases.redis)
