/**
 * Shared Access Signature checking for the test server's `$cbs` node. A token reads
 * `SharedAccessSignature sr=<url-encoded resource>&sig=<url-encoded base64 HMAC-SHA256>&se=<unix expiry>&skn=<key name>`,
 * the HMAC taken with the key over `<url-encoded resource>\n<expiry>` (Service Bus SAS authentication).
 */
import {createHmac, timingSafeEqual} from 'node:crypto'

export interface TokenCheck {
  ok: boolean
  /** The resource URL the token grants access to (decoded). */
  resource?: string
  reason?: string
}

export function checkSasToken(token: unknown, keyName: string, key: string, nowSeconds = Math.floor(Date.now() / 1000)): TokenCheck {
  if (typeof token !== 'string' || !token.startsWith('SharedAccessSignature ')) return {ok: false, reason: 'not a shared access signature'}
  const fields = new Map<string, string>()
  for (const pair of token.slice('SharedAccessSignature '.length).split('&')) {
    const eq = pair.indexOf('=')
    if (eq > 0) fields.set(pair.slice(0, eq), pair.slice(eq + 1))
  }
  const sr = fields.get('sr')
  const sig = fields.get('sig')
  const se = fields.get('se')
  const skn = fields.get('skn')
  if (sr === undefined || sig === undefined || se === undefined || skn === undefined) return {ok: false, reason: 'incomplete token'}
  if (decodeURIComponent(skn) !== keyName) return {ok: false, reason: `unknown key name ${decodeURIComponent(skn)}`}
  if (!/^\d+$/.test(se) || Number(se) <= nowSeconds) return {ok: false, reason: 'token expired'}
  const expected = createHmac('sha256', key).update(`${sr}\n${se}`).digest()
  const given = Buffer.from(decodeURIComponent(sig), 'base64')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return {ok: false, reason: 'invalid signature'}
  return {ok: true, resource: decodeURIComponent(sr)}
}

/** Whether a token for `resource` covers the entity at `path` (a namespace token covers everything). */
export function covers(resource: string, endpoint: string, path: string): boolean {
  const base = resource.replace(/\/+$/, '').toLowerCase()
  const target = `${endpoint.replace(/\/+$/, '')}/${path}`.toLowerCase()
  return target === base || target.startsWith(`${base}/`)
}
