import {UsageError} from '../../errors.js'

/** A broker URL as WHATWG parses it; a refusal names only the redacted form. */
export function parseBrokerUrl(rawUrl: string, displayUrl: string): URL {
  let url: URL
  try {
    url = new URL(rawUrl)
  } catch {
    throw new UsageError(`${displayUrl} is not a valid URL${unencodedPasswordHint(rawUrl, undefined)}`)
  }
  const hint = unencodedPasswordHint(rawUrl, url)
  if (hint !== '') throw new UsageError(`${displayUrl} is not the URL it looks like${hint}`)
  return url
}

/**
 * A password holding `#`, `/` or `?` ends the URL's user part early: `amqp://ops:a#b@host` is
 * a host "ops" with a fragment. Said in the operator's words, with the fix; '' when not so.
 */
function unencodedPasswordHint(rawUrl: string, url: URL | undefined): string {
  const rest = rawUrl.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '')
  const at = rest.lastIndexOf('@')
  if (at === -1) return ''
  const userinfo = rest.slice(0, at)
  // Parsed, an '@' left in the fragment or path (not the query, where a parameter may hold one) is a cut-short user part.
  const cut = url === undefined ? /^[^:@/?#]*:[^@]*[#/?]/.test(userinfo) : url.username === '' && (url.hash.includes('@') || url.pathname.includes('@'))
  return cut ? ': a password containing #, / or ? must be percent-encoded in the URL (# as %23, / as %2F, ? as %3F, @ as %40)' : ''
}

/**
 * The query of any broker URL, also of one WHATWG URL parsing refuses (a Redis sentinel URL lists
 * several hosts); empty when there is none. For the checks made before a broker's own parsing
 * (insecure=true, Redis's timeout=).
 */
export function urlQuery(url: string): URLSearchParams {
  const start = url.indexOf('?')
  if (start === -1) return new URLSearchParams()
  const end = url.indexOf('#', start)
  return new URLSearchParams(url.slice(start + 1, end === -1 ? undefined : end))
}
