// Preloaded with --import by test/e2e/start-cost.test.ts: registers a resolve hook that appends
// every module bq imports to the file named by $BQ_RECORD_IMPORTS.
import {register} from 'node:module'

register('./record-imports-hooks.mjs', import.meta.url)
