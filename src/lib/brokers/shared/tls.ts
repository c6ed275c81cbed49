/**
 * TLS the same way on every broker URL: `ca=PATH` (trust this CA bundle, beside Node's own and
 * NODE_EXTRA_CA_CERTS), `cert=PATH` + `key=PATH` (a client certificate), `servername=NAME` (SNI
 * and the name the certificate must carry, when it differs from the host), and `insecure=true`,
 * the only way to skip verification (openBroker warns on every run that uses it, and a protected
 * context refuses it). A failed handshake becomes one line that names the reason and the option
 * that fixes it (`tlsFailure`).
 */
import {isIP} from 'node:net'
import {createRequire} from 'node:module'
import type {ConnectionOptions} from 'node:tls'

import {readBoundedText} from '../../cli/bounded-file.js'
import {ConnectionError, UsageError, describeError} from '../../errors.js'

/** The URL parameters this module owns; each broker's url.ts adds them to its known ones. */
export const TLS_PARAMS: readonly string[] = ['ca', 'cert', 'key', 'servername', 'insecure']

export interface TlsSettings {
  /** What Node's tls.connect (and the SDKs that pass options through to it) takes. */
  options: ConnectionOptions & {ca?: string[]; cert?: string; key?: string; servername?: string; rejectUnauthorized: boolean}
  /** insecure=true: certificates are not verified. */
  insecure: boolean
  /** The files the operator named, for messages. */
  caPath?: string
  certPath?: string
}

export interface TlsContext {
  /** Whether this URL's scheme (or ssl=true) asks for TLS. */
  tls: boolean
  /** The host connected to, for the default SNI name. */
  host: string
  /** The scheme or parameter that turns TLS on, for the refusal of TLS options without it (`rediss://`, `ssl=true`). */
  tlsHint: string
}

/** True when the URL's query turns verification off (openBroker's warning, the protected-context check). */
export function saysInsecure(params: URLSearchParams): boolean {
  return parseFlag(params.get('insecure')) === true
}

/**
 * The TLS settings of a URL's query; undefined when the URL does not use TLS. TLS options on a
 * plaintext URL are refused rather than ignored: the operator meant an encrypted connection.
 * The files are read and checked here (a PEM that does not parse, a key that is not the
 * certificate's), so such mistakes are usage errors before any connection is tried.
 */
export function parseTlsParams(params: URLSearchParams, displayUrl: string, context: TlsContext): TlsSettings | undefined {
  const given = TLS_PARAMS.filter((name) => params.has(name))
  // Two values would leave one silently unused (which CA is trusted?): say which, once.
  const twice = given.find((name) => params.getAll(name).length > 1)
  if (twice !== undefined) throw new UsageError(`${displayUrl}: ${twice}= is given ${params.getAll(twice).length} times: give it once`)
  if (!context.tls) {
    if (given.length > 0) throw new UsageError(`${displayUrl}: ${given.map((name) => `${name}=`).join(', ')} ${given.length === 1 ? 'needs' : 'need'} TLS: use ${context.tlsHint}`)
    return undefined
  }
  const insecureText = params.get('insecure')
  const insecure = parseFlag(insecureText)
  if (insecureText !== null && insecure === undefined) throw new UsageError(`${displayUrl}: insecure must be true or false, got "${insecureText}"`)
  const caPath = nonEmpty(params.get('ca'), 'ca', displayUrl)
  const certPath = nonEmpty(params.get('cert'), 'cert', displayUrl)
  const keyPath = nonEmpty(params.get('key'), 'key', displayUrl)
  if ((certPath === undefined) !== (keyPath === undefined)) {
    throw new UsageError(`${displayUrl}: a client certificate needs both cert=PATH and key=PATH (${certPath === undefined ? 'cert' : 'key'}= is missing)`)
  }
  const servername = nonEmpty(params.get('servername'), 'servername', displayUrl) ?? (isIP(context.host) === 0 ? context.host : undefined)
  const options: TlsSettings['options'] = {rejectUnauthorized: insecure !== true}
  if (servername !== undefined) options.servername = servername
  if (caPath !== undefined) options.ca = [readPem(caPath, 'ca', displayUrl)]
  if (certPath !== undefined && keyPath !== undefined) {
    options.cert = readPem(certPath, 'cert', displayUrl)
    options.key = readPem(keyPath, 'key', displayUrl)
  }
  checkSecureContext(options, displayUrl, {caPath, certPath, keyPath})
  return {options, insecure: insecure === true, caPath, certPath}
}

/** The warning every run with insecure=true prints. */
export function insecureWarning(displayUrl: string): string {
  return `TLS certificate verification is off for ${displayUrl} (insecure=true): bq cannot tell this broker from an impostor; pass ca=PATH instead`
}

/**
 * A port that took the TCP connection but never finished the handshake (or answered in
 * plaintext): a plaintext server there, waiting for a command line.
 */
export const NO_TLS_ANSWER = 'the broker did not answer in TLS on that port: check the port, or use the plaintext scheme'

/**
 * The reason for a connection the broker closed right after the handshake, before any answer:
 * with TLS 1.3 the client learns only so that its certificate was missing or refused.
 */
export function tlsClosedEarlyReason(settings?: TlsSettings): string {
  return settings?.certPath === undefined
    ? 'the broker closed the TLS connection before answering (it may want a client certificate: pass cert=PATH and key=PATH)'
    : `the broker closed the TLS connection before answering (it may not accept the client certificate ${settings.certPath}: use one signed by a CA the broker trusts)`
}

/** Node's verification codes, grouped by what the operator does about them. */
const UNTRUSTED = new Set(['UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY', 'UNABLE_TO_GET_ISSUER_CERT', 'CERT_UNTRUSTED', 'CERT_SIGNATURE_FAILURE'])

/**
 * One line for a failed TLS handshake, naming the reason and the option that fixes it; undefined
 * when `error` (or anything in its cause chain) is not a TLS failure. `settings` says what the
 * URL already gave, so the advice fits (a ca= that does not sign the server's certificate).
 */
export function tlsFailureReason(error: unknown, settings?: TlsSettings): string | undefined {
  for (const found of causeChain(error)) {
    const code = (found as NodeJS.ErrnoException).code ?? ''
    const message = found instanceof Error ? found.message : String(found)
    if (UNTRUSTED.has(code) || /self[- ]signed certificate|unable to verify the first certificate|unable to get (local )?issuer certificate/i.test(message)) {
      const given = settings?.caPath === undefined ? '' : ` (${settings.caPath} is not the CA that signed it)`
      return `the broker's TLS certificate is not trusted${given}: pass ca=PATH with the CA that signed it, or set NODE_EXTRA_CA_CERTS`
    }
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || /does not match certificate's altnames/i.test(message)) {
      const listed = certificateNames(found, message)
      return `the broker's TLS certificate is not for the name connected to${listed === undefined ? '' : ` (it lists ${listed})`}: connect by a name it lists, or pass servername=NAME`
    }
    if (code === 'CERT_HAS_EXPIRED' || /certificate has expired/i.test(message)) {
      return "the broker's TLS certificate has expired: renew it on the broker (insecure=true would skip every check, not only this one)"
    }
    if (code === 'CERT_NOT_YET_VALID' || /certificate is not yet valid/i.test(message)) {
      return "the broker's TLS certificate is not valid yet (check the clocks): renew it on the broker"
    }
    if (/CERTIFICATE_REQUIRED|certificate required/i.test(code + message)) {
      return 'the broker wants a client certificate: pass cert=PATH and key=PATH'
    }
    if (/ALERT_BAD_CERTIFICATE|ALERT_UNKNOWN_CA|ALERT_CERTIFICATE_UNKNOWN|alert bad certificate|alert unknown ca/i.test(code + message)) {
      return settings?.certPath === undefined
        ? 'the broker refused the TLS handshake (it may want a client certificate: pass cert=PATH and key=PATH)'
        : `the broker does not accept the client certificate ${settings.certPath}: use one signed by a CA the broker trusts`
    }
    if (/WRONG_VERSION_NUMBER|wrong version number|packet length too long|unknown protocol/i.test(code + message)) {
      return NO_TLS_ANSWER
    }
  }
  return undefined
}

/**
 * The names a certificate that failed the host check is for: its subjectAltName as Node attaches
 * it to the error, else what Node's message lists (after "altnames:" for a host name, "list:" for
 * an IP address), else its subject's CN; undefined when none is known.
 */
function certificateNames(error: unknown, message: string): string | undefined {
  const cert = (error as {cert?: {subjectaltname?: string; subject?: {CN?: string | string[]}}}).cert
  if (typeof cert?.subjectaltname === 'string' && cert.subjectaltname.trim() !== '') return cert.subjectaltname.trim()
  const fromMessage = /(?:cert's altnames|cert's list): (.*)$/.exec(message)?.[1]?.trim()
  if (fromMessage) return fromMessage
  const cn = cert?.subject?.CN
  if (cn !== undefined && cn.length > 0) return `CN=${Array.isArray(cn) ? cn.join(', CN=') : cn}`
  return undefined
}

/** A ConnectionError (code `tls`, exit 4) for a failed handshake; undefined when `error` is not one. */
export function tlsConnectionError(error: unknown, displayUrl: string, settings?: TlsSettings): ConnectionError | undefined {
  const reason = tlsFailureReason(error, settings)
  return reason === undefined ? undefined : new ConnectionError(`cannot connect to ${displayUrl}: ${reason}`, error, 'tls')
}

/** `error`, its causes and the members of an AggregateError, outermost first (bounded). */
function* causeChain(error: unknown): Generator<unknown> {
  const pending: unknown[] = [error]
  for (let seen = 0; pending.length > 0 && seen < 20; seen += 1) {
    const next = pending.shift()
    if (next === undefined || next === null) continue
    yield next
    if (typeof next === 'object') {
      const {cause, errors} = next as {cause?: unknown; errors?: unknown}
      if (cause !== undefined) pending.push(cause)
      if (Array.isArray(errors)) pending.push(...errors)
    }
  }
}

/** `true` or `false`, nothing else: the error says so, and a switch that turns checks off must be unambiguous. */
function parseFlag(text: string | null): boolean | undefined {
  if (text === 'true') return true
  if (text === 'false') return false
  return undefined
}

function nonEmpty(value: string | null, name: string, displayUrl: string): string | undefined {
  if (value === null) return undefined
  if (value.trim() === '') throw new UsageError(`${displayUrl}: ${name}= is empty`)
  return value
}

function readPem(path: string, name: string, displayUrl: string): string {
  const text = readBoundedText(path, name === 'key' ? 'key' : 'certificate', {what: `${name}=${path}`, label: '', prefix: `${displayUrl}: `})
  if (!text.includes('-----BEGIN ')) throw new UsageError(`${displayUrl}: ${name}=${path} is not a PEM file (expected -----BEGIN …-----)`)
  return text
}

/** Node's own check of the PEMs (parses, key matches certificate), as a usage error naming the files. */
function checkSecureContext(options: TlsSettings['options'], displayUrl: string, paths: {caPath?: string; certPath?: string; keyPath?: string}): void {
  try {
    // node:tls (and with it crypto) loads only when a URL has TLS files: every command reads this
    // module, most never use TLS.
    const {createSecureContext} = createRequire(import.meta.url)('node:tls') as typeof import('node:tls')
    createSecureContext({ca: options.ca, cert: options.cert, key: options.key})
  } catch (error) {
    const message = describeError(error)
    if (/key values mismatch/i.test(message)) throw new UsageError(`${displayUrl}: key=${paths.keyPath} is not the key of cert=${paths.certPath}`)
    const which = paths.certPath === undefined ? `ca=${paths.caPath}` : `ca=${paths.caPath ?? '(none)'}, cert=${paths.certPath}, key=${paths.keyPath}`
    throw new UsageError(`${displayUrl}: ${which} cannot be used for TLS: ${message}`)
  }
}
