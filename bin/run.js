#!/usr/bin/env node
// oclif's check of Node against its own `engines` loads semver on every start; bq's package.json
// states the Node it needs, and npm checks that at install.
process.env.OCLIF_DISABLE_ENGINE_WARNING ??= '1'
// dist/bq.js is the bundle (scripts/bundle.js): oclif and the commands in one module.
const {execute} = await import('../dist/bq.js')

await execute({dir: import.meta.url})
