/**
 * Credentials never reach a terminal, a log or `--json` output: every broker URL bq prints goes
 * through `redactUrl` first. Over-redacting an odd URL is acceptable; leaking a secret is not.
 */

const MASK = '***'

/** Query/connection-string keys whose values are secrets (matched case-insensitively). */
const SECRET_KEY_PARTS = ['password', 'passwd', 'token', 'secret']
const SECRET_KEYS = new Set(['pwd', 'pass', 'sig', 'signature', 'sharedaccesskey', 'sharedaccesssignature', 'accesskey', 'access_key', 'apikey', 'api_key', 'credential', 'credentials'])

function isSecretKey(key: string): boolean {
  const lower = key.toLowerCase()
  return SECRET_KEYS.has(lower) || SECRET_KEY_PARTS.some((part) => lower.includes(part))
}

/** `key=value` pairs separated by `?`, `&` or `;` (URL queries and Azure-style connection strings). */
function redactPairs(text: string): string {
  return text.replace(/(^|[?&;])([^=?&;#]+)=([^&;#]*)/g, (whole, sep: string, key: string, value: string) =>
    isSecretKey(key.trim()) && value !== '' ? `${sep}${key}=${MASK}` : whole,
  )
}

/** The `user:password@` part: everything after the first `:` up to the `@` becomes `***`. */
function redactUserinfo(rest: string): string {
  const authorityEnd = rest.search(/[/?#]/)
  const authority = authorityEnd === -1 ? rest : rest.slice(0, authorityEnd)
  let at = authority.lastIndexOf('@')
  if (at === -1) {
    // A raw (un-encoded) password may itself contain `/`, `?` or `#`, which ends the authority
    // early. If what precedes the last `@` looks like `user:...` and the part after the colon
    // is not a plain port number, treat it as credentials.
    const colon = authority.indexOf(':')
    const afterColon = colon === -1 ? '' : authority.slice(colon + 1)
    at = rest.lastIndexOf('@')
    if (colon === -1 || at === -1 || /^\d*$/.test(afterColon)) return rest
  }
  const userinfo = rest.slice(0, at)
  const colon = userinfo.indexOf(':')
  if (colon === -1) return rest
  return `${userinfo.slice(0, colon + 1)}${MASK}${rest.slice(at)}`
}

/** The URL (or connection string) with every password, token, secret or key replaced by `***`. */
export function redactUrl(url: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)
  let text = url
  if (scheme) text = scheme[0] + redactUserinfo(url.slice(scheme[0].length))
  else text = redactMistyped(url)
  return redactPairs(text)
}

/**
 * A mistyped URL (`amqp//user:pass@host`, `redis:/:pass@host`) has no scheme to anchor on: all
 * between its first `:` and its last `@` (or all before the `@`) may be a password.
 */
function redactMistyped(text: string): string {
  const at = text.lastIndexOf('@')
  if (at === -1) return text
  const colon = text.indexOf(':')
  return colon !== -1 && colon < at ? `${text.slice(0, colon + 1)}${MASK}${text.slice(at)}` : `${MASK}${text.slice(at)}`
}

/** Replaces every occurrence of the given secrets in a message (for errors that echo their input). */
export function scrubSecrets(message: string, secrets: Array<string | undefined>): string {
  let out = message
  for (const secret of secrets) {
    if (secret !== undefined && secret.length >= 3) out = out.split(secret).join(MASK)
  }
  return out
}
