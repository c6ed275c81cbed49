/**
 * What `--broker` names for Azure Service Bus:
 * - a connection string, `Endpoint=sb://<ns>.servicebus.windows.net/;SharedAccessKeyName=…;SharedAccessKey=…`
 *   (or `;SharedAccessSignature=…`; `;UseDevelopmentEmulator=true` for the emulator and local test
 *   servers, which the SDK then reaches over plain AMQP);
 * - `sb://<ns>.servicebus.windows.net`, with the connection string in BQ_SERVICEBUS_CONNECTION_STRING
 *   (its Endpoint must name the same namespace), or else Azure AD through @azure/identity.
 */
import {UsageError} from '../../errors.js'

export const CONNECTION_STRING_ENV = 'BQ_SERVICEBUS_CONNECTION_STRING'

export type ServiceBusTarget =
  | {kind: 'connection-string'; connectionString: string; host: string; emulator: boolean; secrets: string[]}
  | {kind: 'aad'; host: string}

/** `key=value;…` pairs of a connection string, keys as written. */
export function connectionStringFields(text: string): Map<string, string> {
  const fields = new Map<string, string>()
  for (const part of text.split(';')) {
    const eq = part.indexOf('=')
    if (eq <= 0) continue
    fields.set(part.slice(0, eq).trim().toLowerCase(), part.slice(eq + 1).trim())
  }
  return fields
}

function endpointHost(endpoint: string | undefined, displayUrl: string): string {
  const match = /^sb:\/\/([^/;]+)/i.exec(endpoint ?? '')
  if (!match) throw new UsageError(`${displayUrl} is not a Service Bus connection string: Endpoint=sb://<namespace>.servicebus.windows.net/ is missing`)
  return match[1].toLowerCase()
}

function fromConnectionString(text: string, displayUrl: string): ServiceBusTarget {
  const fields = connectionStringFields(text)
  const host = endpointHost(fields.get('endpoint'), displayUrl)
  if (fields.has('entitypath')) {
    throw new UsageError(`${displayUrl} names an EntityPath; bq takes the queue from the command, so use the namespace-level connection string (without EntityPath)`)
  }
  const hasKey = fields.has('sharedaccesskeyname') && fields.has('sharedaccesskey')
  if (!hasKey && !fields.has('sharedaccesssignature')) {
    throw new UsageError(`${displayUrl} has no credentials: a Service Bus connection string needs SharedAccessKeyName and SharedAccessKey (or SharedAccessSignature)`)
  }
  const secrets = [fields.get('sharedaccesskey'), fields.get('sharedaccesssignature')].filter((s): s is string => s !== undefined && s !== '')
  return {kind: 'connection-string', connectionString: text.trim(), host, emulator: fields.get('usedevelopmentemulator')?.toLowerCase() === 'true', secrets}
}

export function parseServiceBusTarget(raw: string, displayUrl: string, env: NodeJS.ProcessEnv = process.env): ServiceBusTarget {
  const text = raw.trim()
  if (/^\s*endpoint\s*=/i.test(text)) return fromConnectionString(text, displayUrl)
  const url = /^sb:\/\/([^/?#]+)\/?$/i.exec(text)
  if (!url) throw new UsageError(`${displayUrl} is not a Service Bus address: use sb://<namespace>.servicebus.windows.net or a connection string (Endpoint=sb://…;SharedAccessKeyName=…;SharedAccessKey=…)`)
  const host = url[1].toLowerCase()
  const fromEnv = env[CONNECTION_STRING_ENV]?.trim()
  if (fromEnv) {
    const target = fromConnectionString(fromEnv, `$${CONNECTION_STRING_ENV}`)
    if (target.kind === 'connection-string' && target.host !== host) {
      throw new UsageError(`$${CONNECTION_STRING_ENV} is for ${target.host}, not ${host}: point --broker at that namespace, or pass the connection string itself as --broker`)
    }
    return target
  }
  return {kind: 'aad', host}
}
