/** Canary redrive, loop guard and --only-passing on the embedded store. */
import {canarySuite, sqliteCanaryCase} from '../../suites/canary-suite.js'

canarySuite(sqliteCanaryCase())
