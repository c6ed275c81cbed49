/**
 * The bundled entry point (scripts/bundle.js makes dist/bq.js of it): oclif, the commands index
 * and the hooks in one file, so a start reads one module instead of a few hundred. Broker SDKs,
 * ajv, inquirer and cli-table3 stay outside it and load only when a command asks for them.
 * bin/run.js imports this file; package.json points oclif's command discovery and hooks here.
 */
export {execute} from '@oclif/core'
export {COMMANDS} from './commands/index.js'
export {default as commandNotFound} from './hooks/command-not-found.js'
