// The hook test/support/record-imports.mjs registers (it runs on node's loader thread).
import {appendFileSync} from 'node:fs'

export async function resolve(specifier, context, next) {
  const result = await next(specifier, context)
  if (process.env.BQ_RECORD_IMPORTS) appendFileSync(process.env.BQ_RECORD_IMPORTS, `${result.url}\n`)
  return result
}
