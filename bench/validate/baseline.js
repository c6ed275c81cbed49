// The floor bq validate is compared with: read lines, JSON.parse, one precompiled ajv validator.
// No envelope rules, no reporting. Usage: node baseline.js FILE SCHEMA
import {createReadStream, readFileSync} from 'node:fs'
import {createInterface} from 'node:readline'
import {Ajv} from 'ajv'

const [file, schemaPath] = process.argv.slice(2)
const validate = new Ajv({allErrors: true, strict: false}).compile(JSON.parse(readFileSync(schemaPath, 'utf8')))
let lines = 0
let invalid = 0
for await (const line of createInterface({input: createReadStream(file), crlfDelay: Infinity})) {
  if (line === '') continue
  lines++
  if (!validate(JSON.parse(line).data)) invalid++
}
console.log(`${lines} lines, ${invalid} invalid`)
