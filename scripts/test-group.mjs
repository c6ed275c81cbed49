// Runs several test files in this one process (run-tests.js --quick): their tests register with
// node:test's root and run one file after another. It saves a process start and tsx's loader per
// file, which is most of a small file's cost; CI runs every file in a process of its own.
import {resolve} from 'node:path'
import {pathToFileURL} from 'node:url'

for (const file of process.argv.slice(2)) await import(pathToFileURL(resolve(file)).href)
