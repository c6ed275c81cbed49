/**
 * A consumer that behaves like a BabelQueue SDK worker, for the canary tests: it takes messages
 * from a queue and either acknowledges them or fails them to the DLQ as the SDKs do (the same
 * envelope, meta.id and trace kept, with a fresh dead_letter block and attempts), then acks the
 * original. It runs in the test process on the adapter bq itself uses, until stopped.
 */
import type {BrokerAdapter} from '../../src/lib/brokers/adapter.js'
import {openBroker} from '../../src/lib/brokers/registry.js'
import {annotate, decode, fieldsOf} from '../../src/lib/envelope/index.js'
import {QueueNotFoundError} from '../../src/lib/errors.js'

export interface ConsumerOptions {
  url: string
  queue: string
  dlq: string
  /** Whether the n-th message taken (0-based, over the consumer's life) fails. */
  fails: (index: number, id: string) => boolean
  /** Between empty polls. */
  idleMs?: number
}

export interface Consumer {
  /** Ids acked and failed so far. */
  acked: string[]
  failed: string[]
  stop(): Promise<void>
}

export const CONSUMER_EXCEPTION = 'Orders.StillBroken'

export async function startConsumer(options: ConsumerOptions): Promise<Consumer> {
  const adapter: BrokerAdapter = await openBroker(options.url)
  const consumer = {acked: [] as string[], failed: [] as string[]}
  let stopping = false
  let taken = 0
  const loop = (async () => {
    while (!stopping) {
      let session
      try {
        session = await adapter.drain(options.queue, {max: 0})
      } catch (error) {
        // The queue a redrive will create (RabbitMQ, Kafka, Artemis…) is not there yet: nothing to take.
        if (!(error instanceof QueueNotFoundError)) throw error
        await new Promise((resolve) => setTimeout(resolve, options.idleMs ?? 50))
        continue
      }
      let got = 0
      try {
        while (!stopping) {
          const batch = await session.next(100)
          if (batch.length === 0) break
          got += batch.length
          const dead = []
          for (const message of batch) {
            const envelope = decode(message.body)
            const id = envelope.id ?? ''
            if (options.fails(taken++, id)) {
              const failed = annotate(envelope, {reason: 'failed', originalQueue: options.queue, error: 'still broken after the fix', exception: CONSUMER_EXCEPTION, failedAt: Date.now(), attempts: 3, lang: 'python'})
              dead.push({body: failed.toBuffer(), fields: fieldsOf(failed)})
              consumer.failed.push(id)
            } else {
              consumer.acked.push(id)
            }
          }
          // As an SDK: the dead letter is published before the original is acknowledged.
          if (dead.length > 0) await adapter.publish(options.dlq, dead)
          await session.ack(batch)
        }
      } finally {
        await session.close()
      }
      if (got === 0) await new Promise((resolve) => setTimeout(resolve, options.idleMs ?? 50))
    }
  })()
  return {
    ...consumer,
    async stop() {
      stopping = true
      try {
        await loop
      } finally {
        await adapter.close()
      }
    },
  }
}
