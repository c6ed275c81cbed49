/**
 * The two requests of bq's produce path, sent over a kafkajs broker connection (the ones KafkaWire
 * reads through, so TLS, SASL, reconnects and throttling are kafkajs's): InitProducerId, and
 * Produce carrying record batches bq already encoded (batch-encoder.ts).
 *
 * kafkajs's broker has a public `produce`, but it takes message objects and encodes them its own
 * slow way. So the Produce request is built here and handed to the broker's private request
 * method (found by its symbol's name, as KafkaWire finds the cluster factory); the API version
 * comes from the broker's negotiated `lookupRequest`. Produce v3–v7 share one request layout and
 * carry magic-v2 batches; Kafka 4 accepts nothing older than v3. Per-partition errors come back
 * as codes, not exceptions: the caller decides what is retried.
 */
import {createRequire} from 'node:module'

import {BqError} from '../../../errors.js'

const requireCjs = createRequire(import.meta.url)
const PRODUCE_API_KEY = 0
const INIT_PRODUCER_ID_TIMEOUT = 5000
/** The versions built here, highest first chosen by kafkajs's negotiation. */
const PRODUCE_VERSIONS = ['3', '4', '5', '6', '7']
/** How long past the broker's own ack timeout bq waits for its answer. */
const RESPONSE_GRACE_MS = 5000

export interface PartitionBatch {
  partition: number
  /** One encoded record batch. */
  batch: Buffer
}

export interface PartitionOutcome {
  partition: number
  /** 0 when the batch is written; else a Kafka error code (see protocolError). */
  errorCode: number
  baseOffset: string
}

export interface ProducerSession {
  producerId: bigint
  producerEpoch: number
}

/** What kafkajs's Encoder must look like to `createRequest` (it copies `.buffer` behind a size header). */
interface EncodedPayload {
  buf: Buffer
  offset: number
}

export interface ProtocolRequest {
  request: {apiKey: number; apiVersion: number; apiName: string; expectResponse: () => boolean; encode: () => Promise<EncodedPayload>}
  response: {decode: (payload: Buffer) => Promise<unknown>; parse: (data: unknown) => Promise<unknown>}
  requestTimeout: number
}

interface KafkaJsBroker {
  lookupRequest(apiKey: number, definition: {versions: string[]; protocol: (choice: {version: number}) => number}): number
  initProducerId(request: {transactionalId?: string; transactionTimeout: number}): Promise<{producerId: string; producerEpoch: number}>
}

type Encoder = new (initialSize?: number) => EncodedPayload
type ErrorFromCode = (code: number) => Error & {type?: string; retriable?: boolean}

let kafkajsInternals: {Encoder: Encoder; createErrorFromCode: ErrorFromCode} | undefined

function internals(): {Encoder: Encoder; createErrorFromCode: ErrorFromCode} {
  kafkajsInternals ??= {
    Encoder: requireCjs('kafkajs/src/protocol/encoder.js') as Encoder,
    createErrorFromCode: (requireCjs('kafkajs/src/protocol/error.js') as {createErrorFromCode: ErrorFromCode}).createErrorFromCode,
  }
  return kafkajsInternals
}

/** A request body already encoded, as kafkajs's Encoder (it copies `.buf` up to `.offset` behind its request header). */
export function asEncoded(body: Buffer): EncodedPayload {
  return Object.assign(new (internals().Encoder)(0), {buf: body, offset: body.length})
}

/** kafkajs's error for a Kafka error code (with its `type` name and `retriable` flag), so failures read the same as before. */
export function protocolError(code: number): Error & {type?: string; retriable?: boolean} {
  return internals().createErrorFromCode(code)
}

/** A new idempotent producer id and epoch (no transactional id: any broker may answer). */
export async function initProducerId(broker: unknown): Promise<ProducerSession> {
  const result = await (broker as KafkaJsBroker).initProducerId({transactionTimeout: INIT_PRODUCER_ID_TIMEOUT})
  return {producerId: BigInt(result.producerId), producerEpoch: result.producerEpoch}
}

/**
 * Sends one Produce request (one batch per partition of one topic) and returns each partition's
 * outcome. Throws only when there is no answer (connection lost, timeout) or the broker is too old.
 */
export async function produce(broker: unknown, topic: string, batches: PartitionBatch[], acks: number, timeoutMs: number): Promise<PartitionOutcome[]> {
  const target = broker as KafkaJsBroker
  const version = target.lookupRequest(PRODUCE_API_KEY, {versions: PRODUCE_VERSIONS, protocol: ({version}) => version})
  if (version < 3) throw new BqError('this Kafka broker is older than 0.11 (it cannot take record batches with idempotence); bq needs Kafka 0.11 or later')
  const body = encodeProduceBody(topic, batches, acks, timeoutMs)
  const request: ProtocolRequest = {
    request: {
      apiKey: PRODUCE_API_KEY,
      apiVersion: version,
      apiName: 'Produce',
      expectResponse: () => acks !== 0,
      // kafkajs copies `.buffer` (buf up to offset) behind its request header: hand it the body as is.
      encode: async () => asEncoded(body),
    },
    response: {decode: async (payload) => decodeProduceResponse(payload, version), parse: async (data) => data},
    requestTimeout: timeoutMs + RESPONSE_GRACE_MS,
  }
  const decoded = (await sendRequest(target)(request)) as {outcomes: PartitionOutcome[]}
  return decoded.outcomes
}

/** The broker's private request method (it also drops a connection the broker closed); the fetch path uses it too. */
export function sendRequest(broker: unknown): (request: ProtocolRequest) => Promise<unknown> {
  const prototype = Object.getPrototypeOf(broker) as object
  const symbol = Object.getOwnPropertySymbols(prototype).find((candidate) => candidate.description === 'private:Broker:sendRequest')
  const method = symbol === undefined ? undefined : (broker as unknown as Record<symbol, unknown>)[symbol]
  if (typeof method !== 'function') {
    throw new BqError('this version of kafkajs does not expose the broker request method bq produces with; install kafkajs 2.2.x', {code: 'missing-package'})
  }
  return (method as (request: ProtocolRequest) => Promise<unknown>).bind(broker)
}

/**
 * Produce Request v3–v7: transactional_id (null) acks timeout [topic [partition records]].
 * Records are a length-prefixed byte string holding exactly one batch (what Kafka requires of
 * idempotent producers).
 */
export function encodeProduceBody(topic: string, batches: PartitionBatch[], acks: number, timeoutMs: number): Buffer {
  const topicLength = Buffer.byteLength(topic, 'utf8')
  const head = Buffer.allocUnsafe(2 + 2 + 4 + 4 + 2 + topicLength + 4)
  let offset = head.writeInt16BE(-1, 0)
  offset = head.writeInt16BE(acks, offset)
  offset = head.writeInt32BE(timeoutMs, offset)
  offset = head.writeInt32BE(1, offset)
  offset = head.writeInt16BE(topicLength, offset)
  offset += head.write(topic, offset, 'utf8')
  head.writeInt32BE(batches.length, offset)
  const parts: Buffer[] = [head]
  let total = head.length
  for (const {partition, batch} of batches) {
    const prefix = Buffer.allocUnsafe(8)
    prefix.writeInt32BE(partition, 0)
    prefix.writeInt32BE(batch.length, 4)
    parts.push(prefix, batch)
    total += 8 + batch.length
  }
  return Buffer.concat(parts, total)
}

/**
 * Produce Response v3–v7: [topic [partition error_code base_offset log_append_time
 * (v5+: log_start_offset)]] throttle_time_ms. From v6 the client honours the throttle itself
 * (KIP-219): kafkajs's connection reads `clientSideThrottleTime`.
 */
export function decodeProduceResponse(payload: Buffer, version: number): {outcomes: PartitionOutcome[]; throttleTime: number; clientSideThrottleTime?: number} {
  let offset = 0
  const outcomes: PartitionOutcome[] = []
  const topics = payload.readInt32BE(offset)
  offset += 4
  for (let t = 0; t < topics; t++) {
    offset += 2 + payload.readInt16BE(offset)
    const partitions = payload.readInt32BE(offset)
    offset += 4
    for (let p = 0; p < partitions; p++) {
      const partition = payload.readInt32BE(offset)
      const errorCode = payload.readInt16BE(offset + 4)
      const baseOffset = payload.readBigInt64BE(offset + 6).toString()
      offset += 4 + 2 + 8 + 8 + (version >= 5 ? 8 : 0)
      outcomes.push({partition, errorCode, baseOffset})
    }
  }
  const throttleTime = payload.readInt32BE(offset)
  return version >= 6 ? {outcomes, throttleTime: 0, clientSideThrottleTime: throttleTime} : {outcomes, throttleTime}
}
