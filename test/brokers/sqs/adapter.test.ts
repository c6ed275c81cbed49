/**
 * SQS adapter specifics against a real SQS-compatible server (ElasticMQ by default): the §3
 * attributes as they travel, FIFO ids and the 5-minute deduplication window, batching by count
 * and size, delays, native redrive-policy DLQs, receive-count reconciliation, the visibility
 * heartbeat, partial batch failures, and failure to reach an endpoint.
 */
import assert from 'node:assert/strict'
import {after, describe, it} from 'node:test'

import {
  CreateQueueCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type Message,
  type SendMessageBatchCommandOutput,
  type SendMessageBatchRequestEntry,
} from '@aws-sdk/client-sqs'

import type {BrokerAdapter, OutgoingMessage} from '../../../src/lib/brokers/adapter.js'
import {openBroker, redactUrl} from '../../../src/lib/brokers/registry.js'
import {SqsAdapter} from '../../../src/lib/brokers/sqs/adapter.js'
import {createSqsClient} from '../../../src/lib/brokers/sqs/client.js'
import {inBatches} from '../../../src/lib/brokers/sqs/batch.js'
import {deduplicationId} from '../../../src/lib/brokers/sqs/dedup.js'
import {queueOfArn} from '../../../src/lib/brokers/sqs/message.js'
import {checkSqsQueueName, parseSqsUrl} from '../../../src/lib/brokers/sqs/url.js'
import {annotate, decode, fieldsOf, make} from '../../../src/lib/envelope/index.js'
import {BqError, ConnectionError, ExitCode, UsageError} from '../../../src/lib/errors.js'
import {viewOf} from '../../../src/lib/ops/message-view.js'
import {redrive} from '../../../src/lib/ops/redrive.js'
import {uniqueQueue} from '../../support/brokers.js'
import {closeRawSqs, deleteQueues, queueUrl, rawSqs, sqsAvailable, sqsUrl, sqsUrlWith} from './support.js'

const used: string[] = []
function queue(label: string, fifo = false): string {
  const q = uniqueQueue(`sqs-${label}`) + (fifo ? '.fifo' : '')
  used.push(q)
  return q
}

after(async () => {
  await deleteQueues(used)
  closeRawSqs()
})

function envelope(q: string, data = '{"order_id":1042,"amount":99.90}') {
  return make('urn:babel:orders:created', data, {queue: q})
}
function outgoing(env: ReturnType<typeof make>, extra: Partial<OutgoingMessage> = {}): OutgoingMessage {
  return {body: env.toBuffer(), fields: fieldsOf(env), ...extra}
}

/** Receives up to 10 messages with the raw SDK (everything included). */
async function rawReceive(q: string, visibility = 30): Promise<Message[]> {
  const result = await rawSqs().send(
    new ReceiveMessageCommand({QueueUrl: await queueUrl(q), MaxNumberOfMessages: 10, VisibilityTimeout: visibility, WaitTimeSeconds: 1, MessageSystemAttributeNames: ['All'], MessageAttributeNames: ['All']}),
  )
  return result.Messages ?? []
}

async function withAdapter(url: string, fn: (adapter: BrokerAdapter) => Promise<void>): Promise<void> {
  const adapter = await openBroker(url)
  try {
    await fn(adapter)
  } finally {
    await adapter.close()
  }
}

/** An adapter on a client the test can hook (to count or fault SendMessageBatch calls). */
function hookedAdapter(hook: (entries: SendMessageBatchRequestEntry[], send: (entries: SendMessageBatchRequestEntry[]) => Promise<SendMessageBatchCommandOutput>) => Promise<SendMessageBatchCommandOutput>) {
  const target = parseSqsUrl(new URL(sqsUrl), redactUrl(sqsUrl))
  const client = createSqsClient(target)
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'SendMessageBatchCommand') return next(args)
      const input = args.input as {Entries: SendMessageBatchRequestEntry[]}
      const output = await hook(input.Entries, async (entries) => {
        const result = await next({...args, input: {...input, Entries: entries} as typeof args.input})
        return result.output as SendMessageBatchCommandOutput
      })
      return {response: undefined, output} as Awaited<ReturnType<typeof next>>
    },
    {step: 'initialize', name: 'bqTestBatchHook', priority: 'high'},
  )
  return new SqsAdapter(client, target, redactUrl(sqsUrl))
}

describe('sqs adapter', () => {
  it('projects the §3 attributes with their SQS types, and reads them back', async (t) => {
    if (!(await sqsAvailable(t))) return
    await withAdapter(sqsUrl, async (adapter) => {
      const q = queue('attrs')
      const env = envelope(q)
      // Bytes a text round trip could change: CR LF, a BOM-less "\u00e9" escape, emoji, U+2028.
      const odd = Buffer.from('{"s":"a\r\nb \\u00e9 é 🎉 \u2028"}', 'utf8')
      await adapter.publish(q, [outgoing(env, {bypass: true}), {body: odd, fields: null}])
      const received = await rawReceive(q, 0)
      assert.equal(received.length, 2)
      const wire = received.find((m) => m.Body === env.text)
      assert.ok(wire, 'the envelope text is the MessageBody')
      const f = fieldsOf(env)
      assert.deepEqual(wire.MessageAttributes, {
        'bq-job': {DataType: 'String', StringValue: f.job},
        'bq-trace-id': {DataType: 'String', StringValue: f.traceId},
        'bq-message-id': {DataType: 'String', StringValue: f.id},
        'bq-schema-version': {DataType: 'Number', StringValue: '1'},
        'bq-source-lang': {DataType: 'String', StringValue: 'node'},
        'bq-created-at': {DataType: 'Number', StringValue: String(f.createdAt)},
        'bq-replay-bypass': {DataType: 'String', StringValue: '1'},
      })
      const poison = received.find((m) => m.Body !== env.text)
      assert.equal(poison?.MessageAttributes, undefined, 'a body that is not an envelope gets no projection')

      const found = await adapter.browse(q, {limit: 10})
      const mine = found.find((m) => m.body.equals(env.toBuffer()))
      assert.ok(mine)
      assert.ok(found.some((m) => m.body.equals(odd)), 'CR LF and the rest survive byte for byte')
      assert.deepEqual(mine.native, {job: f.job, traceId: f.traceId, id: f.id, lang: 'node', schemaVersion: 1, createdAt: f.createdAt, deliveryCount: 2, replayBypass: true})
      const system = mine.headers.Attributes as Record<string, string>
      assert.equal(system.ApproximateReceiveCount, '2')
      assert.equal(mine.enqueuedAt, Number(system.SentTimestamp))
      assert.equal(mine.position, mine.headers.MessageId)
      assert.deepEqual((mine.headers.MessageAttributes as Record<string, unknown>)['bq-created-at'], {DataType: 'Number', StringValue: String(f.createdAt)})
    })
  })

  it('FIFO: MessageGroupId is the queue (or ?group=), MessageDeduplicationId is meta.id, order is kept', async (t) => {
    if (!(await sqsAvailable(t))) return
    const q = queue('fifo', true)
    const envs = Array.from({length: 12}, (_, i) => envelope(q, `{"n":${i}}`))
    await withAdapter(sqsUrl, async (adapter) => {
      await adapter.publish(q, envs.map((env) => outgoing(env)))
      assert.equal(await adapter.count(q), 12)
      // SQS gives out more of a FIFO group only once what it gave is settled, as a redrive does.
      const session = await adapter.drain(q)
      const taken = []
      for (let batch = await session.next(5); batch.length > 0; batch = await session.next(5)) {
        await session.ack(batch)
        taken.push(...batch)
      }
      await session.close()
      assert.deepEqual(taken.map((m) => m.body.toString()), envs.map((env) => env.text), 'a FIFO queue drains in publish order')
      const attributes = taken.map((m) => m.headers.Attributes as Record<string, string>)
      assert.deepEqual(attributes.map((a) => a.MessageGroupId), envs.map(() => q))
      assert.deepEqual(attributes.map((a) => a.MessageDeduplicationId), envs.map((env) => env.id))
      await assert.rejects(adapter.publish(q, [outgoing(envs[0], {delayMs: 1000})]), (error: unknown) => error instanceof UsageError && /FIFO queue: SQS takes no per-message delay/.test(error.message))
    })
    const grouped = queue('group', true)
    await withAdapter(sqsUrlWith({group: 'tenant-7'}), async (adapter) => {
      await adapter.publish(grouped, [outgoing(envelope(grouped))])
      const [message] = await rawReceive(grouped)
      assert.equal(message.Attributes?.MessageGroupId, 'tenant-7')
    })
  })

  it('FIFO: a message redriven twice within 5 minutes is delivered both times, not dropped as a duplicate', async (t) => {
    if (!(await sqsAvailable(t))) return
    const target = queue('dedup', true)
    const dlq = queue('dedup-dlq')
    const original = envelope(target)
    const dead = annotate(original, {reason: 'failed', originalQueue: target, error: 'boom'})
    await withAdapter(sqsUrl, async (adapter) => {
      // What the binding alone would do: the same meta.id sent again is accepted and dropped.
      await adapter.publish(target, [outgoing(original)])
      await adapter.publish(target, [outgoing(original)])
      assert.equal(await adapter.count(target), 1, 'SQS silently drops a plain re-send of a meta.id within 5 minutes')
      const [first] = await rawReceive(target)
      await rawSqs().send(new DeleteMessageCommand({QueueUrl: await queueUrl(target), ReceiptHandle: first.ReceiptHandle}))

      for (const round of [1, 2]) {
        await adapter.publish(dlq, [outgoing(dead)])
        const report = await redrive({source: adapter, dlq, selectors: [], max: 0, bypass: false, dryRun: false})
        assert.equal(report.counts.redriven, 1, `round ${round}: redriven`)
        const delivered = await rawReceive(target)
        assert.equal(delivered.length, 1, `round ${round}: the redriven copy is on ${target}`)
        assert.equal(delivered[0].Body, original.text)
        assert.match(delivered[0].Attributes?.MessageDeduplicationId ?? '', new RegExp(`^${original.id}:bq-[0-9a-f]{16}$`))
        assert.equal(delivered[0].MessageAttributes?.['bq-message-id']?.StringValue, original.id, 'consumers still see meta.id')
        await rawSqs().send(new DeleteMessageCommand({QueueUrl: await queueUrl(target), ReceiptHandle: delivered[0].ReceiptHandle}))
      }
      assert.equal(await adapter.count(dlq), 0)
    })
  })

  it('batches by count and by size: 10 entries and 256 KiB per SendMessageBatch', async (t) => {
    if (!(await sqsAvailable(t))) return
    const calls: number[][] = []
    const adapter = hookedAdapter(async (entries, send) => {
      calls.push(entries.map((entry) => Buffer.byteLength(entry.MessageBody ?? '')))
      return send(entries)
    })
    try {
      const q = queue('batching')
      const big = Buffer.from(`{"blob":"${'b'.repeat(200 * 1024)}"}`)
      const small = Array.from({length: 10}, (_, i) => Buffer.from(`{"n":${i}}`))
      await adapter.publish(q, [big, ...small].map((body) => ({body, fields: null})))
      assert.deepEqual(calls.map((c) => c.length), [10, 1], 'the 200 KB body and 9 small ones fit one batch; the 10th small one starts the next')
      calls.length = 0
      await adapter.publish(q, [big, big, small[0]].map((body) => ({body, fields: null})))
      assert.deepEqual(calls.map((c) => c.length), [1, 2], 'two 200 KB bodies never share a batch')
      const found = await adapter.browse(q, {limit: 20})
      assert.equal(found.length, 14)
      assert.equal(found.filter((m) => m.body.equals(big)).length, 3)
      for (const body of small) assert.ok(found.some((m) => m.body.equals(body)))
    } finally {
      await adapter.close()
    }
  })

  it('retries the entries SQS failed on its side, and never reports success for one it did not accept', async (t) => {
    if (!(await sqsAvailable(t))) return
    let faults = 2
    const flaky = hookedAdapter(async (entries, send) => {
      // Withhold one entry and report it failed (server side), twice.
      if (faults-- <= 0 || entries.length < 2) return send(entries)
      const result = await send(entries.slice(1))
      return {...result, Failed: [{Id: entries[0].Id!, SenderFault: false, Code: 'InternalError', Message: 'try again'}]}
    })
    const q = queue('partial')
    const bodies = Array.from({length: 5}, (_, i) => Buffer.from(`{"n":${i}}`))
    try {
      await flaky.publish(q, bodies.map((body) => ({body, fields: null})))
      assert.equal(await flaky.count(q), 5, 'every message exactly once')
    } finally {
      await flaky.close()
    }
    const broken = hookedAdapter(async (entries, send) => {
      const result = await send(entries.slice(1))
      return {...result, Failed: [{Id: entries[0].Id!, SenderFault: false, Code: 'InternalError', Message: 'still broken'}]}
    })
    const q2 = queue('partial-fails')
    try {
      await assert.rejects(broken.publish(q2, bodies.map((body) => ({body, fields: null}))), (error: unknown) => {
        assert.ok(error instanceof BqError)
        assert.match(error.message, /did not accept 1 message\(s\) .* after 4 attempts \(InternalError: still broken\) \(4 of 5 were accepted\)/)
        return true
      })
    } finally {
      await broken.close()
    }
    const refusing = hookedAdapter(async (entries, send) => {
      const result = await send(entries.slice(1))
      return {...result, Failed: [{Id: entries[0].Id!, SenderFault: true, Code: 'InvalidParameterValue', Message: 'no'}]}
    })
    try {
      await assert.rejects(refusing.publish(queue('refused'), bodies.map((body) => ({body, fields: null}))), /SQS refused a message .*InvalidParameterValue: no/)
    } finally {
      await refusing.close()
    }
  })

  it('refuses what SQS cannot carry before sending anything', async (t) => {
    if (!(await sqsAvailable(t))) return
    await withAdapter(sqsUrl, async (adapter) => {
      const q = queue('refuse')
      const ok = {body: Buffer.from('{"ok":1}'), fields: null}
      await assert.rejects(adapter.publish(q, [ok, {body: Buffer.from([0x7b, 0xe9, 0x7d]), fields: null}]), (error: unknown) => error instanceof BqError && /message 2 is not valid UTF-8/.test(error.message))
      await assert.rejects(adapter.publish(q, [ok, {body: Buffer.from('{"nul":"\u0000"}'), fields: null}]), /contains U\+0000, a character SQS refuses/)
      await assert.rejects(adapter.publish(q, [{body: Buffer.alloc(0), fields: null}]), /empty body/)
      await assert.rejects(adapter.publish(q, [{...ok, delayMs: 901_000}]), (error: unknown) => error instanceof UsageError && /at most 900 s/.test(error.message))
      await assert.rejects(adapter.publish(q, [ok, {body: Buffer.alloc(1_048_577, 'x'), fields: null}]), /message 2 is 1048577 bytes .* at most 1048576 \(nothing was published\)/)
      assert.equal(await adapter.count(q), 0, 'nothing of a refused publish was sent')
      await assert.rejects(adapter.count('orders.dlq'), (error: unknown) => error instanceof UsageError && /--dlq orders-dlq/.test(error.message))
    })
  })

  it('delays delivery with DelaySeconds (rounded up)', async (t) => {
    if (!(await sqsAvailable(t))) return
    await withAdapter(sqsUrl, async (adapter) => {
      const q = queue('delay')
      await adapter.publish(q, [outgoing(envelope(q), {delayMs: 1500})])
      assert.equal(await adapter.count(q), 0, 'not visible yet')
      const attributes = await rawSqs().send(new GetQueueAttributesCommand({QueueUrl: await queueUrl(q), AttributeNames: ['ApproximateNumberOfMessagesDelayed']}))
      assert.equal(attributes.Attributes?.ApproximateNumberOfMessagesDelayed, '1')
      const deadline = Date.now() + 10_000
      while ((await adapter.count(q)) === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 250))
      assert.equal(await adapter.count(q), 1)
    })
  })

  it('reads a native redrive-policy DLQ and redrives its messages back to the source queue', async (t) => {
    if (!(await sqsAvailable(t))) return
    const source = queue('native-src')
    const dlq = queue('native-dlq')
    const client = rawSqs()
    const dlqUrl = (await client.send(new CreateQueueCommand({QueueName: dlq}))).QueueUrl!
    const dlqArn = (await client.send(new GetQueueAttributesCommand({QueueUrl: dlqUrl, AttributeNames: ['QueueArn']}))).Attributes!.QueueArn!
    await client.send(new CreateQueueCommand({QueueName: source, Attributes: {RedrivePolicy: JSON.stringify({deadLetterTargetArn: dlqArn, maxReceiveCount: 1})}}))
    await withAdapter(sqsUrl, async (adapter) => {
      const env = envelope(source)
      await adapter.publish(source, [outgoing(env)])
      // A consumer fails it: received once (count 1), then again, which exceeds maxReceiveCount.
      assert.equal((await rawReceive(source, 0)).length, 1)
      assert.equal((await rawReceive(source, 0)).length, 0)
      assert.equal(await adapter.count(dlq), 1)

      const [found] = await adapter.browse(dlq, {limit: 10})
      assert.ok(found.body.equals(env.toBuffer()))
      assert.deepEqual(found.native.nativeDeadLetter, {reason: 'max_receive_count', originalQueue: source})
      const view = viewOf(found, adapter.binding)
      assert.equal(view.deadLetter?.native, true)
      assert.equal(view.deadLetter?.originalQueue, source)

      const report = await redrive({source: adapter, dlq, selectors: [], max: 0, bypass: false, dryRun: false})
      assert.deepEqual(report.counts, {examined: 1, redriven: 1, would_redrive: 0, skipped: 0, poison: 0, failed: 0})
      assert.equal(await adapter.count(dlq), 0)
      const back = await rawReceive(source)
      assert.equal(back.length, 1)
      assert.equal(back[0].Body, env.text, 'back on the source queue byte for byte')
      assert.equal(back[0].Attributes?.ApproximateReceiveCount, '1', 'a new message: its receive count starts again')
    })
  })

  it('redrives a DLQ message by its meta.queue when SQS recorded no source', async (t) => {
    if (!(await sqsAvailable(t))) return
    const home = queue('home')
    const dlq = queue('plain-dlq')
    await withAdapter(sqsUrl, async (adapter) => {
      // No dead_letter block and no DeadLetterQueueSourceArn: only meta.queue says where it belongs.
      const env = envelope(home)
      await adapter.publish(dlq, [outgoing(env)])
      const report = await redrive({source: adapter, dlq, selectors: [], max: 0, bypass: false, dryRun: false})
      assert.equal(report.counts.redriven, 1)
      assert.equal((await rawReceive(home))[0]?.Body, env.text)
    })
  })

  it('reconciles attempts with ApproximateReceiveCount − 1, never below the body', async (t) => {
    if (!(await sqsAvailable(t))) return
    await withAdapter(sqsUrl, async (adapter) => {
      const q = queue('attempts')
      const once = decode(envelope(q).text.replace('"attempts":0', '"attempts":1'))
      const five = decode(envelope(q).text.replace('"attempts":0', '"attempts":5'))
      await adapter.publish(q, [outgoing(once), outgoing(five)])
      for (let i = 0; i < 3; i++) assert.equal((await rawReceive(q, 0)).length, 2)
      // The browse is the 4th receive.
      const views = (await adapter.browse(q, {limit: 10})).map((m) => viewOf(m, adapter.binding))
      const byId = new Map(views.map((v) => [v.id, v]))
      assert.equal(byId.get(once.id)?.message.native.deliveryCount, 4)
      assert.equal(byId.get(once.id)?.attempts, 3)
      assert.equal(byId.get(five.id)?.attempts, 5)
    })
  })

  it('keeps what a drain holds hidden past the visibility timeout, and returns it at close', async (t) => {
    if (!(await sqsAvailable(t))) return
    await withAdapter(sqsUrlWith({visibility: '2'}), async (adapter) => {
      const q = queue('heartbeat')
      await adapter.publish(q, Array.from({length: 15}, (_, i) => ({body: Buffer.from(`{"n":${i}}`), fields: null})))
      const session = await adapter.drain(q)
      const taken = await session.next(15)
      assert.equal(taken.length, 15)
      await session.release(taken.slice(0, 5))
      await new Promise((resolve) => setTimeout(resolve, 5000))
      assert.equal(await adapter.count(q), 0, 'still hidden after 2.5 visibility timeouts')
      assert.deepEqual(await rawReceive(q), [])
      await session.ack(taken.slice(5))
      await session.close()
      assert.equal(await adapter.count(q), 5)
    })
  })

  it('reads one batch ahead once the caller streams, never past the bound, and returns it at close', async (t) => {
    if (!(await sqsAvailable(t))) return
    await withAdapter(sqsUrl, async (adapter) => {
      const q = queue('ahead')
      await adapter.publish(q, Array.from({length: 50}, (_, i) => ({body: Buffer.from(`{"n":${i}}`), fields: null})))
      const session = await adapter.drain(q, {max: 35})
      assert.equal((await session.next(10)).length, 10)
      assert.equal(await adapter.count(q), 40, 'a first call holds only what it handed out')
      const second = await session.next(10)
      assert.equal(second.length, 10)
      await session.ack(second)
      // The read-ahead of up to 10 more is in flight or done.
      const deadline = Date.now() + 5000
      while ((await adapter.count(q)) > 20 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50))
      assert.equal(await adapter.count(q), 20)
      assert.equal((await session.next(10)).length, 10)
      assert.equal((await session.next(10)).length, 5, 'the bound (max 35) holds with read-ahead')
      assert.deepEqual(await session.next(10), [])
      assert.equal(await adapter.count(q), 15)
      await session.close()
      assert.equal(await adapter.count(q), 40, 'everything not acked is back')
    })
  })

  it('fails fast with a one-line ConnectionError (exit 4) when the endpoint is unreachable', async () => {
    await withAdapter('sqs://us-east-1?endpoint=http://127.0.0.1:9', async (adapter) => {
      const started = Date.now()
      await assert.rejects(adapter.count('orders'), (error: unknown) => {
        assert.ok(error instanceof ConnectionError)
        assert.equal(error.exitCode, ExitCode.connection)
        assert.equal(error.message, 'cannot reach sqs://us-east-1?endpoint=http://127.0.0.1:9 (could not find queue "orders"): connection refused')
        return true
      })
      assert.ok(Date.now() - started < 5000, `took ${Date.now() - started} ms`)
    })
  })

  it('checks its URL: no credentials, no unknown parameters, a real region', async () => {
    await assert.rejects(openBroker('sqs://AKIA:hunter2-secret@us-east-1'), (error: unknown) => error instanceof UsageError && !error.message.includes('hunter2-secret') && /does not take AWS credentials/.test(error.message))
    await assert.rejects(openBroker('sqs://us-east-1?endpont=http://x'), /unknown parameter "endpont"/)
    await assert.rejects(openBroker('sqs://not_a_region'), /not an AWS region/)
    await assert.rejects(openBroker('sqs://us-east-1?visibility=0'), /visibility must be/)
    await assert.rejects(openBroker('sqs://us-east-1?endpoint=ftp://x'), /http:\/\/ or https:\/\//)
    const adapter = await openBroker('sqs://eu-west-1?account=123456789012&group=g&visibility=60')
    assert.equal(adapter.kind, 'sqs')
    assert.equal(adapter.displayUrl, 'sqs://eu-west-1?account=123456789012&group=g&visibility=60')
    assert.equal(adapter.capabilities.receiveSideEffects, true)
    await adapter.close()
  })

  it('shows the attributes of messages other producers sent', async (t) => {
    if (!(await sqsAvailable(t))) return
    await withAdapter(sqsUrl, async (adapter) => {
      // A message another producer sent: attributes bq does not know are shown, not lost.
      const q = queue('foreign')
      await adapter.publish(q, [{body: Buffer.from('{"x":1}'), fields: null}])
      await rawSqs().send(new SendMessageCommand({QueueUrl: await queueUrl(q), MessageBody: 'hello', MessageAttributes: {blob: {DataType: 'Binary', BinaryValue: Buffer.from([1, 2, 3])}}}))
      const found = await adapter.browse(q, {limit: 10})
      const foreign = found.find((m) => m.body.toString() === 'hello')
      assert.deepEqual((foreign?.headers.MessageAttributes as Record<string, unknown>).blob, {DataType: 'Binary', BinaryValue: 'AQID'})
      assert.deepEqual(foreign?.native, {deliveryCount: 1})
    })
  })
})

describe('sqs helpers', () => {
  it('derives deduplication ids SQS accepts', () => {
    const body = Buffer.from('{"x":1}')
    assert.equal(deduplicationId('4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa001', body), '4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa001')
    assert.equal(deduplicationId('4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa001', body, '0123456789abcdef'), '4a1f9c2e-7b3d-4e6a-8f10-2c4d6e8fa001:bq-0123456789abcdef')
    // Not an envelope: the body's hash; an id SQS would refuse (a space, too long): its hash.
    assert.match(deduplicationId(undefined, body), /^[0-9a-f]{64}$/)
    assert.match(deduplicationId('has space', body), /^[0-9a-f]{64}$/)
    assert.match(deduplicationId('x'.repeat(120), body, '0123456789abcdef'), /^[0-9a-f]{64}:bq-0123456789abcdef$/)
    assert.notEqual(deduplicationId('a', body, '0000000000000001'), deduplicationId('a', body, '0000000000000002'))
  })

  it('names queues the way SQS does', () => {
    for (const ok of ['orders', 'orders-dlq', 'orders_1', 'orders.fifo', 'x'.repeat(80), `${'x'.repeat(75)}.fifo`]) checkSqsQueueName(ok, 'sqs://x')
    for (const bad of ['', 'orders.dlq', 'a.b.fifo', 'a b', 'x'.repeat(81), '.fifo']) assert.throws(() => checkSqsQueueName(bad, 'sqs://x'), UsageError, bad)
  })

  it('reads the source queue from a DeadLetterQueueSourceArn', () => {
    assert.equal(queueOfArn('arn:aws:sqs:us-east-1:000000000000:orders'), 'orders')
    assert.equal(queueOfArn('arn:aws:sqs:eu-west-1:123456789012:orders.fifo'), 'orders.fifo')
    assert.equal(queueOfArn('arn:aws:sns:us-east-1:000000000000:topic'), undefined)
    assert.equal(queueOfArn(undefined), undefined)
  })

  it('splits batches by count and by bytes', () => {
    assert.deepEqual(inBatches([1, 2, 3, 4, 5], () => 1, 2).map((b) => b.length), [2, 2, 1])
    assert.deepEqual(inBatches([200, 30, 30, 200, 300], (n) => n, 10, 256).map((b) => b.join('+')), ['200+30', '30+200', '300'])
  })
})
