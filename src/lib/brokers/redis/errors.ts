/**
 * What a Redis failure means for the operator, in one redacted line: refused credentials or a
 * missing ACL permission (AuthError, exit 6: retrying cannot help), a failed TLS handshake
 * (shared/tls.ts, exit 4), or a server that cannot be reached (exit 4). Redis's own words are
 * kept in the message; the password never is.
 */
import {createConnection} from 'node:net'
import {type ConnectionOptions, connect as tlsConnect} from 'node:tls'

import {AuthError, type BqError, ConnectionError, describeError} from '../../errors.js'
import {scrubSecrets} from '../shared/redact.js'
import {NO_TLS_ANSWER, tlsClosedEarlyReason, tlsConnectionError} from '../shared/tls.js'
import type {RedisTarget} from './url.js'

export interface ErrorContext {
  displayUrl: string
  target: RedisTarget
}

/** ioredis's rejection of a command whose `commandTimeout` ran out. */
export const COMMAND_TIMED_OUT = 'Command timed out'

/** The adapter's own bound on connecting ran out (ioredis's connectTimeout may say ETIMEDOUT first). */
export class ConnectTimedOut extends Error {
  constructor(readonly ms: number) {
    super(`no answer within ${Math.round(ms / 100) / 10} s (is a Redis server listening there?)`)
    this.name = 'ConnectTimedOut'
  }
}

/**
 * The error for a failed connect. `errors` are what the connect rejected with and the last
 * 'error' event, in that order (either may be the telling one).
 */
export async function connectFailure(errors: unknown[], context: ErrorContext, connectTimeoutMs: number): Promise<BqError> {
  const {displayUrl, target} = context
  const found = errors.filter((error) => error !== undefined)
  for (const error of found) {
    const refused = refusal('connect', error, context)
    if (refused !== undefined) return refused
  }
  const cause = found[0]
  if (target.tls !== undefined) {
    for (const error of found) {
      const tls = tlsConnectionError(error, displayUrl, target.tls)
      if (tls !== undefined) return tls
    }
    const codes = found.map((error) => (error as NodeJS.ErrnoException).code)
    // A plaintext Redis waits for the end of a command line that a TLS client hello never sends.
    const stalled = found.some((error) => error instanceof ConnectTimedOut) || codes.includes('ETIMEDOUT')
    if (stalled && target.sentinel === undefined && (await tcpAnswers(target.connection.host, target.connection.port))) {
      return new ConnectionError(`cannot connect to ${displayUrl}: ${NO_TLS_ANSWER}`, cause, 'tls')
    }
    if (codes.includes('ECONNRESET')) return new ConnectionError(`cannot connect to ${displayUrl}: ${tlsClosedEarlyReason(target.tls)}`, cause, 'tls')
    // ioredis keeps a sentinel's TLS failure to itself ("Connection is closed"): one handshake of our own tells why.
    const first = target.sentinel?.sentinels[0]
    if (first !== undefined && found.some((error) => /All sentinels are unreachable/.test(describeError(error)))) {
      const handshake = await tlsHandshakeError(first.host, first.port, target.tls.options)
      const tls = handshake === undefined ? undefined : tlsConnectionError(handshake, displayUrl, target.tls)
      if (tls !== undefined) return tls
    }
  }
  const error = found.find((candidate) => candidate instanceof ConnectTimedOut) ?? found.at(-1)
  return new ConnectionError(`cannot connect to ${displayUrl}: ${connectReason(error, context, connectTimeoutMs)}`, error)
}

/** Why a TLS handshake with host:port fails (undefined when it succeeds or does not finish within a second). */
function tlsHandshakeError(host: string, port: number, options: ConnectionOptions): Promise<unknown> {
  return new Promise((resolve) => {
    const socket = tlsConnect({...options, host, port})
    const done = (error: unknown) => {
      socket.destroy()
      resolve(error)
    }
    socket.setTimeout(1000, () => done(undefined))
    socket.once('secureConnect', () => done(undefined))
    socket.once('error', (error) => done(error))
  })
}

/** True when something accepts a TCP connection on host:port within a second. */
function tcpAnswers(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({host, port})
    const done = (ok: boolean) => {
      socket.destroy()
      resolve(ok)
    }
    socket.setTimeout(1000, () => done(false))
    socket.once('connect', () => done(true))
    socket.once('error', () => done(false))
  })
}

/**
 * An AuthError when Redis refused who we are (WRONGPASS, NOAUTH) or what we asked (NOPERM);
 * undefined for any other failure. `what` is the operation, as in "could not publish to orders".
 */
export function refusal(what: string, error: unknown, context: ErrorContext): AuthError | undefined {
  const text = scrubSecrets(describeError(error), context.target.secrets)
  const {displayUrl, target} = context
  // ioredis reports a sentinel's refusal inside "All sentinels are unreachable … Last error: …".
  const sentinelSaid = /^All sentinels are unreachable.*? Last error: (.*)$/.exec(text)?.[1]
  const message = sentinelSaid ?? text
  const user = (sentinelSaid === undefined ? target.connection.username : target.sentinel?.username) ?? 'default'
  const during = what === 'connect' ? '' : ` (could not ${what})`
  if (/^WRONGPASS|invalid username-password pair|^ERR invalid password/i.test(message)) {
    if (sentinelSaid !== undefined) {
      return new AuthError(`the sentinels of ${displayUrl} refused the credentials of user "${user}" (${message}): give the sentinels' own with sentinelUsername= and sentinelPassword=`, 'auth', error)
    }
    return new AuthError(`Redis at ${displayUrl} refused the credentials of user "${user}"${during}: wrong password, no such user, or the user is disabled (${message}); check the user and password in the URL or the context's --password-env/--password-file`, 'auth', error)
  }
  if (sentinelSaid !== undefined && /^NOAUTH/.test(message)) {
    return new AuthError(`the sentinels of ${displayUrl} want a password (NOAUTH): give it with sentinelPassword= (and sentinelUsername= for an ACL user)`, 'auth', error)
  }
  if (/^NOAUTH/.test(message)) {
    const given = target.connection.password === undefined ? 'the URL gives none' : 'it was not accepted'
    return new AuthError(`Redis at ${displayUrl} wants a password (NOAUTH) and ${given}${during}: put it in the URL (${target.sentinel === undefined ? 'rediss' : 'rediss+sentinel'}://[user]:PASSWORD@host…) or in a context (bq context add --password-env VAR or --password-file PATH)`, 'auth', error)
  }
  if (/^NOPERM/.test(message)) {
    const command = /the '([^']+)' command/.exec(message)?.[1]
    if (command !== undefined) {
      return new AuthError(`Redis user "${user}" may not run ${command.toUpperCase()} on ${displayUrl}${during}: allow it in the user's ACL with +${command.toLowerCase()} (${message})`, 'permission', error)
    }
    const keys = keysOf(what, target)
    const named = keys === undefined ? 'a key it uses' : `the key ${keys.join(', ')}`
    // Redis checks a script's keys before running it, so a refused move changed nothing.
    const nothing = what.startsWith('move messages to ') ? '; nothing was moved' : ''
    return new AuthError(
      `Redis user "${user}" has no permission for ${named} on ${displayUrl}${during.replace(/\)$/, `${nothing})`)}: allow read and write on the queue's keys in the user's ACL with ~${keys?.[0] ?? `${target.prefix}QUEUE`}* (%R~ allows reading only; bq's scripts need both) (${message})`,
      'permission',
      error,
    )
  }
  return undefined
}

/**
 * The list key an operation names (its queue, or a move's target), for a key the ACL refused:
 * bq's operations are worded "<verb> <queue>" or "move messages to <queue>" (adapter.ts, drain.ts).
 */
function keysOf(what: string, target: RedisTarget): string[] | undefined {
  const queue = /^move messages to (\S+)$/.exec(what)?.[1] ?? /^(?:publish to|browse|count|drain|start draining|lock|recover) (\S+)/.exec(what)?.[1]
  return queue === undefined ? undefined : [`${target.prefix}${queue}`]
}

/** A short, secret-free reason for a connection that could not be made. */
function connectReason(error: unknown, context: ErrorContext, connectTimeoutMs: number): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code
  const message = scrubSecrets(describeError(error), context.target.secrets)
  if (code === 'ECONNREFUSED') return 'connection refused'
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found'
  if (code === 'ETIMEDOUT') return `timed out after ${connectTimeoutMs / 1000} s`
  if (error instanceof ConnectTimedOut) return error.message
  if (message === COMMAND_TIMED_OUT) return `no answer within ${connectTimeoutMs / 1000} s`
  // A TLS-only port closes a plaintext connection during its handshake, before any reply.
  if (context.target.tls === undefined && (code === 'ECONNRESET' || /^Connection is closed|socket hang up|ECONNRESET/.test(message))) {
    return `the server closed the connection before answering (the server may want TLS: use ${context.target.sentinel === undefined ? 'rediss://' : 'rediss+sentinel://'})`
  }
  const {sentinel} = context.target
  if (sentinel !== undefined && /All sentinels are unreachable/.test(message)) {
    const last = /Last error: (.*)$/.exec(message)?.[1]
    const asked = sentinel.sentinels.map(({host, port}) => `${host.includes(':') ? `[${host}]` : host}:${port}`).join(', ')
    return `no sentinel (${asked}) named a master "${sentinel.masterName}": check the master's name (as in the sentinels' "sentinel monitor") and their addresses${last === undefined ? '' : ` (last error: ${last})`}`
  }
  // ioredis's parser error when something other than Redis answers (an HTTP proxy, another service).
  if (/^Protocol error, got |^Stream isn't writeable/.test(message)) return 'the server there does not speak the Redis protocol (is this the right host and port?)'
  return message
}
