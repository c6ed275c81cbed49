/** Canary redrive, loop guard, --only-passing, signals, the terminal status line and a context's ledger on the embedded store. */
import {CANARY_TESTS, canarySuite, sqliteCanaryCase} from '../../suites/canary-suite.js'

canarySuite({...sqliteCanaryCase(), tests: [...CANARY_TESTS, 'terminal', 'context']})
