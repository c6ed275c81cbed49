import {UsageError} from '../../errors.js'

/** A broker URL as WHATWG parses it; a refusal names only the redacted form. */
export function parseBrokerUrl(rawUrl: string, displayUrl: string): URL {
  try {
    return new URL(rawUrl)
  } catch {
    throw new UsageError(`${displayUrl} is not a valid URL`)
  }
}
