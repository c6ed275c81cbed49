/**
 * Artemis's management API over AMQP: a request to the `activemq.management` address names a
 * resource (`queue.<name>`, `broker`) and an attribute or operation in application properties,
 * carries the operation's arguments as a JSON array, and is answered on the reply-to address
 * (here a dynamic, temporary queue) with `_AMQ_OperationSucceeded` and a JSON array body.
 * The user needs the `manage` permission on that address.
 */
import type {Receiver, Sender, Session} from 'rhea'

import {BqError} from '../../errors.js'
import type {ArtemisConnection} from './connection.js'

const MANAGEMENT_ADDRESS = 'activemq.management'
const REPLY_TIMEOUT_MS = 15_000

export interface ManagementReply {
  ok: boolean
  /** The first element of the JSON array the broker answered with (the value or the error text). */
  value: unknown
}

interface Pending {
  resolve(reply: ManagementReply): void
  reject(error: Error): void
  timer: NodeJS.Timeout
}

export class ArtemisManagement {
  private readonly pending = new Map<string, Pending>()
  private nextId = 0
  private readonly stopWatching: () => void

  private constructor(
    private readonly connection: ArtemisConnection,
    private readonly session: Session,
    private readonly sender: Sender,
    private readonly receiver: Receiver,
    private readonly replyTo: string,
  ) {
    receiver.on('message', (context) => {
      const message = context.message
      const id = message?.correlation_id
      const entry = typeof id === 'string' ? this.pending.get(id) : undefined
      if (entry === undefined) return
      this.settle(id as string)
      entry.resolve({ok: message?.application_properties?._AMQ_OperationSucceeded === true, value: firstValue(message?.body)})
    })
    // A request the broker refuses (no permission) is settled with something other than accepted.
    sender.on('settled', (context) => {
      const outcome = context.delivery?.remote_state?.constructor?.composite_type
      const id = (context.delivery as {bqRequestId?: string} | undefined)?.bqRequestId
      if (outcome === 'accepted' || id === undefined) return
      const entry = this.pending.get(id)
      if (entry === undefined) return
      this.settle(id)
      entry.reject(new BqError(`Artemis refused a management request on ${connection.displayUrl} (${outcome ?? 'no outcome'}): does the user have the "manage" permission?`, {code: 'management-refused'}))
    })
    const fail = (error: Error) => {
      for (const [id, entry] of [...this.pending]) {
        this.settle(id)
        entry.reject(error)
      }
    }
    this.stopWatching = connection.onLost(fail)
    for (const link of [sender, receiver]) {
      link.on(link.is_receiver() ? 'receiver_close' : 'sender_close', () => fail(new BqError(`Artemis closed the management link on ${connection.displayUrl}: ${connection.describe(link.error ?? 'no reason given')}`, {code: 'management-closed'})))
    }
  }

  /** Opens the reply queue and the request sender on a session of their own. */
  static async open(connection: ArtemisConnection): Promise<ArtemisManagement> {
    const session = connection.newSession()
    const receiver = await connection.openReceiver({source: {address: '', dynamic: true, expiry_policy: 'link-detach'}, credit_window: 100, autoaccept: true}, session)
    const replyTo = receiver.source?.address
    if (typeof replyTo !== 'string' || replyTo === '') throw new BqError(`Artemis gave no reply address for management requests on ${connection.displayUrl}`)
    const sender = await connection.openSender({target: {address: MANAGEMENT_ADDRESS}, snd_settle_mode: 0}, session)
    return new ArtemisManagement(connection, session, sender, receiver, replyTo)
  }

  attribute(resource: string, attribute: string): Promise<ManagementReply> {
    return this.request({_AMQ_ResourceName: resource, _AMQ_Attribute: attribute}, [])
  }

  invoke(resource: string, operation: string, args: unknown[] = []): Promise<ManagementReply> {
    return this.request({_AMQ_ResourceName: resource, _AMQ_OperationName: operation}, args)
  }

  async close(): Promise<void> {
    this.stopWatching()
    await this.connection.closeLink(this.sender)
    await this.connection.closeLink(this.receiver)
    if (!this.session.is_closed()) this.session.close()
  }

  private request(properties: Record<string, string>, args: unknown[]): Promise<ManagementReply> {
    this.connection.assertOpen()
    const id = `bq-mgmt-${++this.nextId}`
    return new Promise<ManagementReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.settle(id)
        reject(new BqError(`Artemis did not answer a management request within ${REPLY_TIMEOUT_MS / 1000}s on ${this.connection.displayUrl}`, {code: 'timeout'}))
      }, REPLY_TIMEOUT_MS)
      this.pending.set(id, {resolve, reject, timer})
      // Requests are tiny and rare; rhea queues one until the broker grants credit.
      const delivery = this.sender.send({message_id: id, reply_to: this.replyTo, application_properties: properties, body: JSON.stringify(args)})
      ;(delivery as {bqRequestId?: string}).bqRequestId = id
    })
  }

  private settle(id: string): void {
    const entry = this.pending.get(id)
    if (entry === undefined) return
    clearTimeout(entry.timer)
    this.pending.delete(id)
  }
}

/** Replies are a JSON array in an AMQP string value: `[42]`, `["error text"]`. */
function firstValue(body: unknown): unknown {
  if (typeof body !== 'string') return body
  try {
    const parsed: unknown = JSON.parse(body)
    return Array.isArray(parsed) ? parsed[0] : parsed
  } catch {
    return body
  }
}
