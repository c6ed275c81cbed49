/**
 * An AMQP 1.0 server (rhea) that speaks the part of the Azure Service Bus protocol the bq adapter
 * and the @azure/service-bus SDK use, so the adapter runs against the real SDK without Azure.
 * See README.md for what it implements, the Microsoft documents it follows, and its limits.
 *
 * Connect with `connectionString` (it sets `UseDevelopmentEmulator=true`, which makes the SDK use
 * plain AMQP on the endpoint's port, as it does for Microsoft's emulator).
 */
import {randomBytes, randomUUID} from 'node:crypto'
import type {AddressInfo, Server} from 'node:net'

import rhea, {type Connection, type Delivery, type EventContext, type Receiver, type Sender} from 'rhea'

import {decodeParts, ensureMessageId, dotnetGuidBytes, encodeMessage, messageCodec, parseMessage, annotationValue, types, uuidBytes, type MessageParts, type Typed} from './amqp-codec.js'
import {Namespace, NotAllowedError, NotFoundError, normalize, type EntityOptions, type StoredMessage, type SubQueue} from './entities.js'
import {handleManagement} from './management.js'
import {checkSasToken, covers} from './sas.js'
import {deliveryAnnotations} from './stamps.js'

export interface ServiceBusTestServerOptions {
  host?: string
  /** 0 (default) picks a free port. */
  port?: number
  keyName?: string
  key?: string
  /** Service Bus defaults to 60 s; tests shorten it to see expiry. */
  lockDurationMs?: number
  /** Service Bus defaults to 10. */
  maxDeliveryCount?: number
  duplicateDetectionMs?: number
  /** Advertised on the links clients send on; 4 MiB by default (a Premium namespace allows up to 100 MB). */
  maxMessageSize?: number
  /** As real Service Bus: only declared entities exist (`namespace.declareQueue`, `createTopic`); off by default. */
  entitiesMustExist?: boolean
  /**
   * Accept a token whose audience names this host on any port: a client reaching the server
   * through a TCP proxy (the fault tests) signs for the proxy's address. Real Service Bus
   * audiences carry no port at all.
   */
  audienceAnyPort?: boolean
}

export interface ServiceBusTestServer {
  host: string
  port: number
  /** `sb://host:port/` */
  endpoint: string
  keyName: string
  key: string
  connectionString: string
  namespace: Namespace
  /** The sub-queue behind an entity path (`q`, `q/$DeadLetterQueue`, `t/Subscriptions/s`). */
  entity(path: string): SubQueue
  /** Every message a client sent to an entity, as stored (for checking the SDK's projection). */
  received(path: string): MessageParts[]
  /** Drops every client connection abruptly (as a network failure would). */
  dropConnections(): void
  close(): Promise<void>
}

const BATCH_FORMAT = 0x80013700

/** The AMQP error condition for an entity failure (a missing entity is `amqp:not-found`, as on Service Bus). */
function conditionOf(error: unknown): string {
  if (error instanceof NotFoundError) return 'amqp:not-found'
  return error instanceof NotAllowedError ? 'amqp:not-allowed' : 'amqp:internal-error'
}
const RAW = Symbol('bq-raw-amqp-message')

/** Keeps the bytes of every format-0 message rhea decodes, so the server stores what was sent, not a re-encoding. */
let rawCaptureInstalled = false
function installRawCapture(): void {
  if (rawCaptureInstalled) return
  rawCaptureInstalled = true
  const original = messageCodec.decode.bind(messageCodec)
  messageCodec.decode = (buffer: Buffer) => {
    const decoded = original(buffer)
    Object.defineProperty(decoded, RAW, {value: buffer, enumerable: false})
    return decoded
  }
}

interface ConnectionState {
  /** Resources (URLs) a valid put-token granted on this connection. */
  grants: string[]
  /** Reply links by their target address (request-response nodes answer to `reply-to`). */
  replies: Map<string, Sender>
  /** Stops the delivery pumps of this connection's links when it goes away. */
  pumps: Set<() => void>
}

interface LockedDelivery {
  queue: SubQueue
  message: StoredMessage
  token: string
}

export async function startServiceBusTestServer(options: ServiceBusTestServerOptions = {}): Promise<ServiceBusTestServer> {
  installRawCapture()
  const host = options.host ?? '127.0.0.1'
  const keyName = options.keyName ?? 'RootManageSharedAccessKey'
  const key = options.key ?? randomBytes(32).toString('base64')
  const entityOptions: EntityOptions = {
    lockDurationMs: options.lockDurationMs ?? 60_000,
    maxDeliveryCount: options.maxDeliveryCount ?? 10,
    duplicateDetectionMs: options.duplicateDetectionMs,
    entitiesMustExist: options.entitiesMustExist,
  }
  const ns = new Namespace(entityOptions)
  const maxMessageSize = options.maxMessageSize ?? 4 * 1024 * 1024
  const container = rhea.create_container({id: 'bq-servicebus-test', autoaccept: false, treat_modified_as_released: false} as never)
  const states = new WeakMap<Connection, ConnectionState>()
  const deliveries = new WeakMap<Delivery, LockedDelivery>()
  const connections = new Set<Connection>()
  let endpoint = ''

  const stateOf = (connection: Connection): ConnectionState => {
    let state = states.get(connection)
    if (state === undefined) {
      state = {grants: [], replies: new Map(), pumps: new Set()}
      states.set(connection, state)
    }
    return state
  }
  const authorized = (connection: Connection, path: string) =>
    stateOf(connection).grants.some((resource) => covers(resource, endpoint, path) || (options.audienceAnyPort === true && covers(withoutPort(resource), withoutPort(endpoint), path)))

  container.on('connection_open', (context: EventContext) => {
    connections.add(context.connection)
    stateOf(context.connection)
  })
  const gone = (context: EventContext) => {
    connections.delete(context.connection)
    for (const stop of stateOf(context.connection).pumps) stop()
    stateOf(context.connection).pumps.clear()
  }
  container.on('disconnected', gone)
  container.on('connection_close', gone)
  container.on('error', () => undefined)
  container.on('connection_error', () => undefined)

  // A client receiver attached: the server sends on this link.
  container.on('sender_open', (context: EventContext) => {
    const sender = context.sender as Sender
    const remote = (sender as unknown as {remote: {attach: unknown}}).remote.attach as {source?: {address?: string}; target?: {address?: string}; snd_settle_mode?: number; rcv_settle_mode?: number}
    const source = remote.source?.address ?? ''
    const local = (sender as unknown as {local: {attach: Record<string, unknown>}}).local.attach
    local.source = {address: source}
    local.target = remote.target
    local.snd_settle_mode = remote.snd_settle_mode ?? 0
    local.rcv_settle_mode = remote.rcv_settle_mode ?? 0
    if (source === '$cbs' || source === '$management' || source.endsWith('/$management')) {
      // Responses go to the link whose target address is the request's reply-to; a client that
      // leaves the target empty (the SDK's $cbs link) is found by its link name instead.
      const replies = stateOf(context.connection).replies
      if (remote.target?.address !== undefined) replies.set(remote.target.address, sender)
      replies.set(sender.name, sender)
      return
    }
    const path = normalize(source)
    if (!authorized(context.connection, path)) {
      sender.close({condition: 'amqp:unauthorized-access', description: `no valid token for ${path}: send a put-token to $cbs first`})
      return
    }
    let queue: SubQueue
    try {
      queue = ns.subQueue(path)
    } catch (error) {
      sender.close({condition: conditionOf(error), description: (error as Error).message})
      return
    }
    startPump(sender, queue, remote.snd_settle_mode === 1)
  })

  // A client sender attached: the server receives on this link.
  container.on('receiver_open', (context: EventContext) => {
    const receiver = context.receiver as Receiver
    const remote = (receiver as unknown as {remote: {attach: unknown}}).remote.attach as {target?: {address?: string}; source?: unknown}
    const target = remote.target?.address ?? ''
    const local = (receiver as unknown as {local: {attach: Record<string, unknown>}}).local.attach
    local.target = {address: target}
    local.source = remote.source
    local.max_message_size = maxMessageSize
    if (target === '$cbs' || target === '$management' || target.endsWith('/$management')) return
    const path = normalize(target)
    if (!authorized(context.connection, path)) {
      receiver.close({condition: 'amqp:unauthorized-access', description: `no valid token for ${path}: send a put-token to $cbs first`})
      return
    }
    try {
      ns.sendTargets(path)
    } catch (error) {
      receiver.close({condition: error instanceof NotFoundError ? 'amqp:not-found' : 'amqp:not-allowed', description: (error as Error).message})
    }
  })

  container.on('message', (context: EventContext) => {
    const receiver = context.receiver as Receiver
    const target = ((receiver as unknown as {remote: {attach: {target?: {address?: string}}}}).remote.attach.target?.address) ?? ''
    const delivery = context.delivery as Delivery
    if (target === '$cbs') return void putToken(context)
    if (target === '$management' || target.endsWith('/$management')) return void management(context, normalize(target.replace(/\/?\$management$/, '')))
    try {
      const encoded = encodedMessages(context)
      const targets = ns.sendTargets(normalize(target))
      for (const raw of encoded) {
        const parts = ensureMessageId(parseMessage(raw), randomUUID)
        const when = annotationValue(parts, 'x-opt-scheduled-enqueue-time')
        const scheduledAt = when instanceof Date ? when.getTime() : undefined
        const id = decodeParts(parts).message_id
        for (const queue of targets) queue.enqueue(parts, id === undefined || id === null ? undefined : String(id), scheduledAt)
      }
      delivery.accept()
    } catch (error) {
      delivery.reject({condition: conditionOf(error), description: (error as Error).message})
    }
  })

  /** The encoded messages of a transfer: one, or the data sections of a batch (format 0x80013700). */
  function encodedMessages(context: EventContext): Buffer[] {
    const format = (context as unknown as {format?: number}).format
    const message = context.message as unknown
    if (format === BATCH_FORMAT && Buffer.isBuffer(message)) {
      const reader = new types.Reader(message)
      const out: Buffer[] = []
      while (reader.remaining() > 0) {
        const section = reader.read()
        if (Number(section.descriptor?.value) === 0x75) out.push(Buffer.from(section.value as Buffer))
      }
      return out
    }
    const raw = (message as Record<symbol, Buffer | undefined>)[RAW]
    if (raw === undefined) throw new Error('message bytes were not captured')
    return [raw]
  }

  function reply(context: EventContext, properties: Record<string, unknown>, body?: Typed): void {
    const request = context.message as {message_id?: unknown; reply_to?: string}
    const link = request.reply_to === undefined ? undefined : stateOf(context.connection).replies.get(request.reply_to)
    ;(context.delivery as Delivery).accept()
    if (link === undefined || !link.is_open()) return
    link.send({correlation_id: request.message_id, application_properties: properties, body} as never)
  }

  function putToken(context: EventContext): void {
    const request = context.message as {application_properties?: Record<string, unknown>; body?: unknown}
    const props = request.application_properties ?? {}
    if (props.operation !== 'put-token') return reply(context, {'status-code': 400, 'status-description': `unknown $cbs operation ${String(props.operation)}`})
    const check = checkSasToken(request.body, keyName, key)
    if (!check.ok || check.resource === undefined) return reply(context, {'status-code': 401, 'status-description': `unauthorized: ${check.reason ?? 'invalid token'}`})
    stateOf(context.connection).grants.push(check.resource)
    reply(context, {'status-code': 200, 'status-description': 'OK'})
  }

  function management(context: EventContext, path: string): void {
    const request = context.message as {application_properties?: Record<string, unknown>; body?: unknown}
    if (!authorized(context.connection, `${path}/$management`) && !authorized(context.connection, path)) {
      return reply(context, {statusCode: 401, statusDescription: `no valid token for ${path}`, errorCondition: 'amqp:unauthorized-access'})
    }
    let queue: SubQueue
    try {
      queue = ns.subQueue(path)
    } catch (error) {
      if (error instanceof NotFoundError) return reply(context, {statusCode: 404, statusDescription: error.message, errorCondition: 'amqp:not-found'})
      return reply(context, {statusCode: 400, statusDescription: (error as Error).message, errorCondition: 'amqp:not-allowed'})
    }
    const body = typeof request.body === 'object' && request.body !== null && !Buffer.isBuffer(request.body) ? (request.body as Record<string, unknown>) : undefined
    const response = handleManagement(ns, queue, request.application_properties?.operation, body)
    const props: Record<string, unknown> = {statusCode: response.statusCode, statusDescription: response.statusDescription}
    if (response.errorCondition !== undefined) props.errorCondition = response.errorCondition
    reply(context, props, response.body)
  }

  /** Sends ready messages while the link has credit; answers a drain when nothing is left. */
  function startPump(sender: Sender, queue: SubQueue, receiveAndDelete: boolean): void {
    // rhea takes credit when it writes a transfer, after this returns; deliveries not yet written
    // are counted here so the server never sends (and locks) more than the receiver asked for.
    let unsent: Array<{id: number}> = []
    const link = sender as unknown as {_draining?: boolean; credit: number; set_drained(v: boolean): void; connection: {_register(): void}; session: {outgoing: {next_pending_delivery: number}}}
    const pump = () => {
      if (!sender.is_open()) return
      unsent = unsent.filter((delivery) => delivery.id >= link.session.outgoing.next_pending_delivery)
      while (sender.sendable() && link.credit - unsent.length > 0) {
        const message = queue.takeNext()
        if (message === undefined) break
        if (receiveAndDelete) {
          queue.remove(message)
          unsent.push(sender.send(encodeMessage(message.parts, {deliveryCount: message.deliveryCount, annotations: deliveryAnnotations(message, {})}) as never, Buffer.alloc(0) as never, 0) as {id: number})
          continue
        }
        const lock = queue.lock(message)
        const tag = dotnetGuidBytes(uuidBytes(lock.token))
        const encoded = encodeMessage(message.parts, {deliveryCount: message.deliveryCount, annotations: deliveryAnnotations(message, {lockToken: lock.token, lockedUntil: lock.until})})
        const delivery = sender.send(encoded as never, tag as never, 0)
        deliveries.set(delivery, {queue, message, token: lock.token})
        unsent.push(delivery as {id: number})
      }
      if (link._draining && link.credit - unsent.length > 0 && !queue.hasReady()) {
        link.set_drained(true)
        link.connection._register()
      }
    }
    const unsubscribe = queue.onReady(pump)
    const pumps = stateOf(sender.connection).pumps
    const stop = () => {
      unsubscribe()
      pumps.delete(stop)
    }
    pumps.add(stop)
    sender.on('sendable', pump)
    sender.on('sender_flow', pump)
    sender.on('sender_draining', pump)
    sender.on('sender_close', stop)
    sender.on('sender_error', stop)
  }

  // Settlement of a peek-lock delivery: accepted = complete, released = abandon, modified = abandon
  // (or defer when undeliverable-here), rejected = dead-letter. The server settles with the outcome,
  // or with a lock-lost error when the lock expired or was settled already.
  const settle = (outcome: 'accepted' | 'released' | 'modified' | 'rejected') => (context: EventContext) => {
    const delivery = context.delivery as Delivery & {remote_state?: {undeliverable_here?: boolean; error?: {condition?: string; description?: string; info?: Record<string, unknown>}}; update(settled: boolean, state?: unknown): void}
    const record = deliveries.get(delivery)
    if (record === undefined) return
    deliveries.delete(delivery)
    const {queue, message, token} = record
    const lock = message.lock
    if (message.removed || lock === undefined || lock.token !== token || lock.until <= Date.now()) {
      delivery.update(true, messageCodec.rejected({error: {condition: 'com.microsoft:message-lock-lost', description: 'The lock supplied is invalid: it expired, or the message was already settled or removed.'}}).described())
      return
    }
    const state = delivery.remote_state
    try {
      if (outcome === 'accepted') queue.remove(message)
      else if (outcome === 'released') queue.abandon(message)
      else if (outcome === 'modified') {
        if (state?.undeliverable_here) queue.defer(message)
        else queue.abandon(message)
      } else {
        const info = state?.error?.info ?? {}
        const reason = typeof info.DeadLetterReason === 'string' ? info.DeadLetterReason : undefined
        const description = typeof info.DeadLetterErrorDescription === 'string' ? info.DeadLetterErrorDescription : undefined
        queue.moveToDeadLetter(message, reason, description)
      }
      // Settled with an outcome that carries no error (the SDK treats an error there as a failure):
      // released for abandon and defer, accepted for complete and dead-letter.
      delivery.update(true, (outcome === 'released' || outcome === 'modified' ? messageCodec.released() : messageCodec.accepted()).described())
    } catch (error) {
      delivery.update(true, messageCodec.rejected({error: {condition: error instanceof NotAllowedError ? 'amqp:not-allowed' : 'amqp:internal-error', description: (error as Error).message}}).described())
    }
  }
  container.on('accepted', settle('accepted'))
  container.on('released', settle('released'))
  container.on('modified', settle('modified'))
  container.on('rejected', settle('rejected'))

  const server = container.listen({port: options.port ?? 0, host}) as unknown as Server
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve)
    server.once('error', reject)
  })
  const port = (server.address() as AddressInfo).port
  endpoint = `sb://${host}:${port}/`
  const connectionString = `Endpoint=${endpoint};SharedAccessKeyName=${keyName};SharedAccessKey=${key};UseDevelopmentEmulator=true`

  return {
    host,
    port,
    endpoint,
    keyName,
    key,
    connectionString,
    namespace: ns,
    entity: (path) => ns.subQueue(path),
    received: (path) => ns.subQueue(path).received,
    dropConnections: () => {
      for (const connection of connections) (connection as unknown as {socket?: {destroy(): void}}).socket?.destroy()
    },
    close: async () => {
      ns.close()
      for (const connection of connections) (connection as unknown as {socket?: {destroy(): void}}).socket?.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** `sb://host:port/x` → `sb://host/x`. */
function withoutPort(url: string): string {
  return url.replace(/^(sb:\/\/[^/:]+):\d+/i, '$1')
}
