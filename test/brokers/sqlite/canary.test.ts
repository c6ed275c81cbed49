/** Canary redrive, loop guard, --only-passing, signals and the terminal status line on the embedded store. */
import {CANARY_TESTS, canarySuite, sqliteCanaryCase} from '../../suites/canary-suite.js'

canarySuite({...sqliteCanaryCase(), tests: [...CANARY_TESTS, 'terminal']})
