/**
 * Pulsar's web port over TLS with the URL's own options (ca, cert, key, servername, insecure):
 * Node's fetch cannot take them (it has no agent option without the undici package), so an
 * https:// admin call with TLS settings goes through node:https and is answered as a fetch
 * Response. A refused token or permission (HTTP 401 / 403, on an admin call or the WebSocket
 * upgrade) is exit 6, naming what was refused.
 */
import {request as httpsRequest} from 'node:https'

import {AuthError} from '../../errors.js'
import type {TlsSettings} from '../shared/tls.js'

/** Statuses whose answer carries no body (the Response constructor refuses one). */
const NO_BODY = new Set([101, 204, 205, 304])

/** fetch(), or with TLS settings the same request over node:https with them. */
export function webFetch(url: string, init: RequestInit, tls: TlsSettings | undefined): Promise<Response> {
  if (tls === undefined || !url.startsWith('https:')) return fetch(url, init)
  return new Promise<Response>((resolve, reject) => {
    const request = httpsRequest(url, {method: init.method ?? 'GET', headers: init.headers as Record<string, string>, ...tls.options, signal: init.signal ?? undefined}, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('error', reject)
      response.on('end', () => {
        const status = response.statusCode ?? 0
        resolve(new Response(NO_BODY.has(status) ? null : Buffer.concat(chunks), {status, statusText: response.statusMessage ?? ''}))
      })
    })
    request.on('error', reject)
    if (typeof init.body === 'string') request.write(init.body)
    request.end()
  })
}

/**
 * HTTP 401 (no token, or one the broker does not accept) → 'auth'; 403 (a valid token whose role
 * may not do this on the topic or namespace) → 'permission'; undefined for any other status.
 * `what` names the operation and topic; `reason` is the broker's text, already scrubbed.
 */
export function pulsarRefusal(status: number, reason: string, what: string, displayUrl: string, hasToken: boolean): AuthError | undefined {
  if (status === 401) {
    const token = hasToken ? 'refused the token (is it expired, or signed with another key?)' : 'wants a token: pass ?token= or set BQ_PULSAR_TOKEN'
    return new AuthError(`cannot ${what} on ${displayUrl}: the broker ${token} (HTTP 401: ${reason})`, 'auth')
  }
  if (status === 403) {
    return new AuthError(`cannot ${what} on ${displayUrl}: the token's role has no permission for it (HTTP 403: ${reason}; pulsar-admin namespaces grant-permission / topics grant-permission)`, 'permission')
  }
  return undefined
}
