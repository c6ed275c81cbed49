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

/** A URL (or connection string) inside a message: up to whitespace, a quote, a bracket or a comma. */
const URL_IN_TEXT = /[a-z][a-z0-9+.-]*:\/\/[^\s"'`<>()[\],]+/gi

/** Characters that continue a token: a secret followed or preceded by one is part of a longer word. */
const TOKEN_CHAR = /[\w-]/
/** Where a client echoes a value (`password="…"`, `pass: …`, `…@host`), as opposed to prose around it. */
const ECHO_BEFORE = new Set(['"', "'", '`', '=', ':'])
const ECHO_AFTER = new Set(['"', "'", '`', '@'])

/**
 * A message from a client or server, with what it may echo of the credentials hidden: every URL's
 * password field and secret `key=value` pairs, and each of `secrets` where it stands as a whole
 * token. Never a substring of a longer word: a password `user` must not turn "username" into
 * "***name", which both garbles the message and gives the password away. A secret made only of
 * letters is also a word servers use in their own text ("or user is disabled"), so it is masked
 * only where it is echoed as a value (quoted, after `=` or `:`, before `@`).
 */
export function scrubSecrets(message: string, secrets: Array<string | undefined>): string {
  let out = message.replace(URL_IN_TEXT, (url) => redactUrl(url))
  for (const secret of secrets) {
    if (secret !== undefined && secret.length >= 3) out = maskToken(out, secret)
  }
  return out
}

function maskToken(text: string, secret: string): string {
  const plainWord = /^[A-Za-z]+$/.test(secret)
  let out = ''
  let from = 0
  for (let at = text.indexOf(secret); at !== -1; at = text.indexOf(secret, at + 1)) {
    if (at < from) continue
    const before = at === 0 ? '' : text[at - 1]
    const after = text[at + secret.length] ?? ''
    const whole = !TOKEN_CHAR.test(before) && !TOKEN_CHAR.test(after)
    const echoed = ECHO_BEFORE.has(before) || ECHO_AFTER.has(after)
    if (!whole || (plainWord && !echoed)) continue
    out += text.slice(from, at) + MASK
    from = at + secret.length
  }
  return out + text.slice(from)
}
